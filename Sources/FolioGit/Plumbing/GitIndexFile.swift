import FolioSystem
import Glibc

/// Git's index file (`.git/index`), mapped read-only and read in place.
///
/// libgit2 reads an index into a map of entries: 400 ms for 300,000 of
/// them on this class of machine. A status or a commit of a few documents
/// needs a handful of entries, and a rewrite of the file copies the rest
/// as they are; both walk the mapped bytes, a few milliseconds for the
/// same file.
///
/// Versions 2 and 3 are read (what git and libgit2 write by default and
/// what Folio writes), whole or split: a split index (the `link`
/// extension) keeps most entries in a shared file that does not change,
/// `.git/sharedindex.<sha>`, and only what changed since in `.git/index`
/// (``GitIndexFile+Split``). Version 4 (prefix-compressed paths) and a
/// sparse index (`sdir`) are not: ``open(_:)`` returns nil for them, and
/// callers go through libgit2.
final class GitIndexFile: IndexEntryLookup {
  /// One entry, pointing into a mapped file.
  struct Entry {
    /// The entry's fields (stat data, id, flags), in mapped memory.
    var fields: UnsafeRawPointer
    /// The bytes the entry takes where it is: fields, path and padding.
    var length: Int
    /// The path's bytes, without the NUL. They follow the fields, except
    /// for an entry a split index replaced without repeating the path,
    /// which has the replaced entry's.
    var path: UnsafeBufferPointer<UInt8>
    /// The stage (0 for a merged entry).
    var stage: Int
    /// Whether the fields carry a second flags word (version 3).
    var extended: Bool
    var skipWorktree: Bool

    /// Whether the path's bytes follow the fields: the entry can be copied
    /// as it is.
    var isWhole: Bool {
      UnsafeRawPointer(path.baseAddress!) == fields + (extended ? 64 : 62)
    }

    /// The 32-bit field at `offset`.
    func word(_ offset: Int) -> UInt32 {
      UInt32(bigEndian: fields.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// The blob id.
    var id: GitOID {
      GitOID(bytes: Array(UnsafeRawBufferPointer(start: fields + 40, count: 20)))
    }

    /// Whether the file's stat data is what the entry recorded: size,
    /// modification time and inode, as git's own check (ctime is left out,
    /// as `core.trustctime` allows, since a backup tool changes it).
    func matches(_ st: stat) -> Bool {
      word(8) == UInt32(truncatingIfNeeded: st.st_mtim.tv_sec)
        && word(12) == UInt32(truncatingIfNeeded: st.st_mtim.tv_nsec)
        && word(20) == UInt32(truncatingIfNeeded: st.st_ino)
        && word(36) == UInt32(truncatingIfNeeded: st.st_size)
    }
  }

  /// `.git/index`: every entry, or for a split index those changed since
  /// the shared one.
  let top: MappedIndexFile
  /// The shared index a split one names.
  let shared: MappedIndexFile?
  /// Every entry, in path order, read from the mapped bytes when asked
  /// for: only their positions are kept, 4 bytes an entry.
  let entries: Entries

  /// `.git/index`'s trailing SHA-1: it names this index.
  var checksum: [UInt8] { top.checksum }
  /// Whether the entries are split between two files.
  var isSplit: Bool { shared != nil }

  /// The entries, as a collection over their positions.
  struct Entries: RandomAccessCollection {
    let top: MappedIndexFile
    let shared: MappedIndexFile?
    /// For a split index, each entry's place: the shared index's entry at
    /// a position, or with ``topFlag`` set, the top file's.
    let view: [UInt32]?
    /// The shared entry whose path each replacing entry (top position)
    /// takes, when it left its own out.
    let replacedPaths: [Int: Int]

    /// Marks a position in `view` as the top file's.
    static let topFlag: UInt32 = 1 << 31

    var startIndex: Int { 0 }
    var endIndex: Int { view?.count ?? top.offsets.count }

    subscript(position: Int) -> Entry {
      guard let view else { return top.entry(at: position) }
      let place = view[position]
      guard place & Self.topFlag != 0 else { return shared!.entry(at: Int(place)) }
      let at = Int(place & ~Self.topFlag)
      var entry = top.entry(at: at)
      if entry.path.isEmpty, let from = replacedPaths[at] { entry.path = shared!.entry(at: from).path }
      return entry
    }

    /// The shared index's position of the entry at `position`, if it is
    /// one of the shared index's entries.
    func sharedPosition(_ position: Int) -> Int? {
      guard let view, view[position] & Self.topFlag == 0 else { return nil }
      return Int(view[position])
    }
  }

  /// Maps the index at `path`, and the shared index it names if it is split.
  /// - Returns: nil when there is no index, or it is a version or a form
  ///   this reader leaves to libgit2.
  /// - Throws: `GIT` for a file that is not a whole index, or a split
  ///   index whose shared part is missing or does not fit it.
  static func open(_ path: String) throws -> GitIndexFile? {
    guard let top = try MappedIndexFile.open(path) else { return nil }
    guard let link = top.link, link.count >= 20, link.prefix(20).contains(where: { $0 != 0 }) else {
      return GitIndexFile(top: top)
    }
    let name = "sharedindex." + SHA1.hex(Array(link.prefix(20)))
    let sharedPath = FileSystem.split(path).directory + "/" + name
    guard let shared = try MappedIndexFile.open(sharedPath) else {
      throw FolioError(
        .git,
        "git's index is split, and its shared part \(name) is missing; "
          + "remove .git/index and run 'git reset' to rebuild it", path: path)
    }
    guard shared.link == nil, shared.checksum == Array(link.prefix(20)) else {
      throw MappedIndexFile.corrupt(sharedPath, "it is not the shared index .git/index names")
    }
    return try GitIndexFile(top: top, shared: shared, link: UnsafeRawBufferPointer(rebasing: link[20...]))
  }

  private init(top: MappedIndexFile) {
    self.top = top
    shared = nil
    entries = Entries(top: top, shared: nil, view: nil, replacedPaths: [:])
  }

  /// A split index: the shared entries less those `link` deletes, those it
  /// replaces swapped for the top file's first entries, and the top file's
  /// other entries added in path order (an added entry takes the place of
  /// a shared one at its path and stage), as git merges them.
  private init(top: MappedIndexFile, shared: MappedIndexFile, link: UnsafeRawBufferPointer) throws {
    self.top = top
    self.shared = shared
    let limit = shared.offsets.count
    var deleted: [Int] = []
    var replaced: [Int] = []
    if !link.isEmpty {
      guard let deletes = EWAHBitmap.decode(link, limit: limit),
        let replaces = EWAHBitmap.decode(
          UnsafeRawBufferPointer(rebasing: link[deletes.length...]), limit: limit),
        deletes.length + replaces.length == link.count
      else { throw MappedIndexFile.corrupt(top.path, "its link extension's bitmaps are damaged") }
      (deleted, replaced) = (deletes.positions, replaces.positions)
    }
    guard replaced.count <= top.offsets.count else {
      throw MappedIndexFile.corrupt(top.path, "it replaces more entries than it holds")
    }
    let topFlag = Entries.topFlag
    // The shared entries that stay, the replaced ones swapped.
    var kept: [UInt32] = []
    kept.reserveCapacity(limit)
    var replacedPaths: [Int: Int] = [:]
    var nextDeleted = 0
    var nextReplaced = 0
    for position in 0..<limit {
      var place = UInt32(position)
      if nextReplaced < replaced.count, replaced[nextReplaced] == position {
        place = UInt32(nextReplaced) | topFlag
        if top.entry(at: nextReplaced).path.isEmpty { replacedPaths[nextReplaced] = position }
        nextReplaced += 1
      }
      if nextDeleted < deleted.count, deleted[nextDeleted] == position {
        nextDeleted += 1
        continue
      }
      kept.append(place)
    }
    let partial = Entries(top: top, shared: shared, view: kept, replacedPaths: replacedPaths)
    // The added entries, each put in place by a binary search of the rest.
    var view: [UInt32] = []
    view.reserveCapacity(kept.count + top.offsets.count - replaced.count)
    var from = 0
    var previous: Entry?
    for added in replaced.count..<top.offsets.count {
      let entry = top.entry(at: added)
      guard !entry.path.isEmpty, previous.map({ Self.order($0, entry) < 0 }) ?? true else {
        throw MappedIndexFile.corrupt(top.path, "its added entries are not in path order")
      }
      previous = entry
      var low = from
      var high = kept.count
      while low < high {
        let middle = (low + high) / 2
        if Self.order(partial[middle], entry) < 0 { low = middle + 1 } else { high = middle }
      }
      view += kept[from..<low]
      view.append(UInt32(added) | topFlag)
      from = low
      if low < kept.count, Self.order(partial[low], entry) == 0 { from += 1 }
    }
    view += kept[from...]
    entries = Entries(top: top, shared: shared, view: view, replacedPaths: replacedPaths)
  }

  /// Git's entry order: path, then stage.
  static func order(_ a: Entry, _ b: Entry) -> Int {
    let byPath = compare(a.path, b.path)
    return byPath != 0 ? byPath : (a.stage - b.stage).signum()
  }

  /// The position of the first entry whose path is `path` or sorts after
  /// it, in git's order (bytes, the shorter first).
  func firstPosition(atOrAfter path: [UInt8]) -> Int {
    var low = 0
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      if Self.compare(entries[middle].path, path) < 0 { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The stage-0 entry at `path`, as libgit2's index gives it.
  func entry(at path: String) -> GitIndex.Entry? {
    guard let entry = rawEntry(at: path) else { return nil }
    return GitIndex.Entry(
      path: path, id: entry.id, stage: 0, skipWorktree: entry.skipWorktree, mode: entry.word(24),
      size: entry.word(36), mtimeSeconds: Int32(bitPattern: entry.word(8)),
      mtimeNanoseconds: entry.word(12), inode: entry.word(20))
  }

  /// The stage-0 entry at `path`, in place.
  func rawEntry(at path: String) -> Entry? {
    let key = Array(path.utf8)
    var position = firstPosition(atOrAfter: key)
    while position < entries.count, Self.compare(entries[position].path, key) == 0 {
      if entries[position].stage == 0 { return entries[position] }
      position += 1
    }
    return nil
  }

  /// Git's path order: bytes, then the shorter first.
  static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Int {
    b.withUnsafeBufferPointer { compare(a, $0) }
  }

  /// Git's path order of two paths in place.
  static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
    let common = min(a.count, b.count)
    guard common > 0 else { return (a.count - b.count).signum() }
    let result = memcmp(a.baseAddress!, b.baseAddress!, common)
    if result != 0 { return Int(result.signum()) }
    return (a.count - b.count).signum()
  }

  /// Whether the index holds exactly the files of `tree` (nil: none), with
  /// no conflict stages: its ids, not its stat data. A plain `git status`
  /// rewrites the index to refresh stat data; this tells that it did no
  /// more, without a stat of any file.
  func holds(_ tree: GitTree?, repository: GitRepository) throws -> Bool {
    guard let tree else { return entries.isEmpty }
    var files = GitIndex.TreeFiles(root: tree, repository: repository)
    for entry in entries {
      guard entry.stage == 0,
        try files.next(path: entry.path, mode: entry.word(24), id: entry.id)
      else { return false }
    }
    return try files.isExhausted()
  }
}
