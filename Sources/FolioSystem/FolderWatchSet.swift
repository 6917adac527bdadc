import Glibc

/// The inotify watches on one table folder: the folder itself, and for a
/// table whose files live one level down (a hashed layout) each of its
/// subfolders, so that every change to a document file raises an event
/// named by the file's path inside the folder (`86/a.json`).
///
/// inotify watches are not recursive. A subfolder made after the watches
/// were set is watched when its creation is seen, and then listed: files
/// written into it before its watch was in place raise no event, and are
/// reported as changed instead. A subfolder moved away takes its files
/// without an event for each, so it is reported as ``Change/lost``, as is
/// the loss of the folder's own watch: the owner checks the folder whole.
///
/// The owner supplies how watches are added and removed (its own
/// ``Inotify`` or an ``EventLoop``), and hands each event of the set's
/// watches to ``interpret(_:add:remove:)``.
package struct FolderWatchSet {
  /// The folder, absolute.
  package let folder: String
  /// Which subfolder names hold files; nil when files live in the folder
  /// itself.
  private let isSubfolder: (@Sendable (Substring) -> Bool)?
  /// The folder's watch; nil before ``start(add:)`` succeeds.
  package private(set) var top: Int32?
  /// Each subfolder's watch, and the subfolder's name.
  package private(set) var subfolders: [Int32: String] = [:]

  /// What an event means for the files of the folder.
  package enum Change: Equatable {
    /// The file at this path inside the folder may have changed.
    case file(String)
    /// Changes may have been missed: check the whole folder.
    case lost
  }

  package init(folder: String, isSubfolder: (@Sendable (Substring) -> Bool)?) {
    self.folder = folder
    self.isSubfolder = isSubfolder
  }

  /// Every watch of the set.
  package var watches: [Int32] { (top.map { [$0] } ?? []) + subfolders.keys.sorted() }

  /// Whether `watch` is one of the set's.
  package func contains(_ watch: Int32) -> Bool { watch == top || subfolders[watch] != nil }

  /// Watches the folder, then each subfolder already there.
  /// - Returns: false when a watch could not be added (the set then holds
  ///   none: `remove` took back those it had).
  package mutating func start(add: (String) -> Int32?, remove: (Int32) -> Void) -> Bool {
    guard let watch = add(folder) else { return false }
    top = watch
    guard let isSubfolder else { return true }
    for name in (try? FileSystem.list(folder)) ?? [] where isSubfolder(Substring(name)) {
      guard FileSystem.isDirectoryNoFollow(folder + "/" + name) else { continue }
      guard let sub = add(folder + "/" + name) else {
        stop(remove: remove)
        return false
      }
      subfolders[sub] = name
    }
    return true
  }

  /// Removes every watch of the set.
  package mutating func stop(remove: (Int32) -> Void) {
    for watch in watches { remove(watch) }
    top = nil
    subfolders = [:]
  }

  /// What `event`, on one of the set's watches, means. A subfolder just
  /// made is watched (with `add`) and listed here.
  package mutating func interpret(
    _ event: Inotify.Event, add: (String) -> Int32?, remove: (Int32) -> Void
  ) -> [Change] {
    let lostMask = UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_IGNORED) | UInt32(IN_UNMOUNT)
    if event.watch == top {
      if event.has(lostMask) { return [.lost] }
      guard !event.name.isEmpty else { return [] }
      guard let isSubfolder, event.has(IN_ISDIR), isSubfolder(Substring(event.name)) else {
        return [.file(event.name)]
      }
      if event.has(IN_MOVED_FROM) { return [.lost] }  // its files went with it
      guard event.has(IN_CREATE) || event.has(IN_MOVED_TO) else { return [] }
      let path = folder + "/" + event.name
      guard FileSystem.isDirectoryNoFollow(path) else { return [] }
      guard let watch = add(path) else { return [.lost] }
      subfolders[watch] = event.name
      // Files made before the watch was in place raised no event.
      return ((try? FileSystem.list(path)) ?? []).sorted().map { .file(event.name + "/" + $0) }
    }
    guard let name = subfolders[event.watch] else { return [] }
    if event.has(lostMask) {
      subfolders[event.watch] = nil
      if !event.has(IN_IGNORED) { remove(event.watch) }
      // Removed when empty (each file's removal had its event); moved or
      // unmounted, its files went without one.
      return event.has(IN_DELETE_SELF) || event.has(IN_IGNORED) ? [] : [.lost]
    }
    guard !event.name.isEmpty else { return [] }
    return [.file(name + "/" + event.name)]
  }
}
