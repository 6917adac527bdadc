import Glibc

/// The inotify watches on one table folder: the folder itself, and for a
/// table whose files live in folders further down (a hashed or nested
/// layout) each of those folders, so that every change to a document file
/// raises an event named by the file's path inside the folder
/// (`86/a.json`, `86/f/a.json`).
///
/// inotify watches are not recursive. A folder made after the watches
/// were set is watched when its creation is seen, and then listed: files
/// and folders made in it before its watch was in place raise no event,
/// and are reported as changed (or watched) instead. A folder moved away
/// takes its files without an event for each, so it is reported as
/// ``Change/lost``, as is the loss of the table folder's own watch: the
/// owner checks the folder whole.
///
/// The owner supplies how watches are added and removed (its own
/// ``Inotify`` or an ``EventLoop``), and hands each event of the set's
/// watches to ``interpret(_:add:remove:)``.
package struct FolderWatchSet {
  /// The folder, absolute.
  package let folder: String
  /// For each level of folders below the table's, outermost first, which
  /// names are such folders; empty when files live in the folder itself.
  private let levels: [@Sendable (Substring) -> Bool]
  /// The folder's watch; nil before ``start(add:remove:)`` succeeds.
  package private(set) var top: Int32?
  /// Each folder's watch below the table's, and the folder's path inside
  /// the table's folder (`86`, `86/f`).
  package private(set) var subfolders: [Int32: String] = [:]

  /// What an event means for the files of the folder.
  package enum Change: Equatable {
    /// The file at this path inside the folder may have changed.
    case file(String)
    /// Changes may have been missed: check the whole folder.
    case lost
  }

  /// A set for `folder`, whose document files lie `levels.count` folders
  /// down, each level's folder names told by its predicate.
  package init(folder: String, levels: [@Sendable (Substring) -> Bool]) {
    self.folder = folder
    self.levels = levels
  }

  /// Every watch of the set.
  package var watches: [Int32] { (top.map { [$0] } ?? []) + subfolders.keys.sorted() }

  /// Whether `watch` is one of the set's.
  package func contains(_ watch: Int32) -> Bool { watch == top || subfolders[watch] != nil }

  /// Watches the folder, then each folder already below it.
  /// - Returns: false when a watch could not be added (the set then holds
  ///   none: `remove` took back those it had).
  package mutating func start(add: (String) -> Int32?, remove: (Int32) -> Void) -> Bool {
    guard let watch = add(folder) else { return false }
    top = watch
    guard watchFolders(in: "", level: 0, add: add, files: nil) else {
      stop(remove: remove)
      return false
    }
    return true
  }

  /// Watches the folders of `level` inside `inner` ("" for the table's
  /// folder), and theirs in turn; the files of the innermost go to
  /// `files`, when given. False when a watch could not be added.
  private mutating func watchFolders(
    in inner: String, level: Int, add: (String) -> Int32?, files: ((String) -> Void)?
  ) -> Bool {
    let base = inner.isEmpty ? folder : folder + "/" + inner
    for name in ((try? FileSystem.list(base)) ?? []).sorted() {
      let path = inner.isEmpty ? name : inner + "/" + name
      guard level < levels.count, levels[level](Substring(name)) else {
        files?(path)
        continue
      }
      guard FileSystem.isDirectoryNoFollow(base + "/" + name) else { continue }
      guard let sub = add(base + "/" + name) else { return false }
      subfolders[sub] = path
      guard watchFolders(in: path, level: level + 1, add: add, files: files) else { return false }
    }
    return true
  }

  /// Removes every watch of the set.
  package mutating func stop(remove: (Int32) -> Void) {
    for watch in watches { remove(watch) }
    top = nil
    subfolders = [:]
  }

  /// What `event`, on one of the set's watches, means. A folder just made
  /// is watched (with `add`) and listed here, with the folders in it.
  package mutating func interpret(
    _ event: Inotify.Event, add: (String) -> Int32?, remove: (Int32) -> Void
  ) -> [Change] {
    let lostMask = UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_IGNORED) | UInt32(IN_UNMOUNT)
    let inner: String
    if event.watch == top {
      if event.has(lostMask) { return [.lost] }
      inner = ""
    } else {
      guard let path = subfolders[event.watch] else { return [] }
      if event.has(lostMask) {
        subfolders[event.watch] = nil
        if !event.has(IN_IGNORED) { remove(event.watch) }
        // Removed when empty (each file's removal had its event); moved or
        // unmounted, its files went without one.
        return event.has(IN_DELETE_SELF) || event.has(IN_IGNORED) ? [] : [.lost]
      }
      inner = path
    }
    guard !event.name.isEmpty else { return [] }
    let path = inner.isEmpty ? event.name : inner + "/" + event.name
    let level = inner.isEmpty ? 0 : inner.utf8.reduce(1) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 }
    guard level < levels.count, event.has(IN_ISDIR), levels[level](Substring(event.name)) else {
      return [.file(path)]
    }
    if event.has(IN_MOVED_FROM) { return [.lost] }  // its files went with it
    guard event.has(IN_CREATE) || event.has(IN_MOVED_TO) else { return [] }
    let absolute = folder + "/" + path
    guard FileSystem.isDirectoryNoFollow(absolute) else { return [] }
    guard let watch = add(absolute) else { return [.lost] }
    subfolders[watch] = path
    // Files and folders made before the watch was in place raised no event.
    var changes: [Change] = []
    guard watchFolders(in: path, level: level + 1, add: add, files: { changes.append(.file($0)) }) else {
      return [.lost]
    }
    return changes
  }
}
