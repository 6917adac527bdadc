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
/// what Folio writes). Version 4 (prefix-compressed paths), a split index
/// (the `link` extension, whose entries live in another file) and a sparse
/// index (`sdir`) are not: ``open(_:)`` returns nil for them, and callers
/// go through libgit2.
final class GitIndexFile: IndexEntryLookup {
  /// One entry, pointing into the mapped file.
  struct Entry {
    /// Where the entry starts in the file, and its length with padding.
    var offset: Int
    var length: Int
    /// The path's bytes, without the NUL.
    var path: UnsafeBufferPointer<UInt8>
    /// The stage (0 for a merged entry).
    var stage: Int
    var skipWorktree: Bool

    /// The blob id.
    func id(in file: GitIndexFile) -> GitOID {
      GitOID(bytes: Array(UnsafeRawBufferPointer(rebasing: file.bytes[(offset + 40)..<(offset + 60)])))
    }

    /// Whether the file's stat data is what the entry recorded: size,
    /// modification time and inode, as git's own check (ctime is left out,
    /// as `core.trustctime` allows, since a backup tool changes it).
    func matches(_ st: stat, in file: GitIndexFile) -> Bool {
      file.word(offset + 8) == UInt32(truncatingIfNeeded: st.st_mtim.tv_sec)
        && file.word(offset + 12) == UInt32(truncatingIfNeeded: st.st_mtim.tv_nsec)
        && file.word(offset + 20) == UInt32(truncatingIfNeeded: st.st_ino)
        && file.word(offset + 36) == UInt32(truncatingIfNeeded: st.st_size)
    }
  }

  /// The mapped bytes.
  let bytes: UnsafeRawBufferPointer
  /// The version (2 or 3).
  let version: UInt32
  /// Every entry, in the file's (path) order, read from the mapped bytes
  /// when asked for: only their offsets are kept, 4 bytes an entry.
  let entries: Entries

  /// The entries, as a collection over their offsets.
  struct Entries: RandomAccessCollection {
    let bytes: UnsafeRawBufferPointer
    /// Where each entry starts, and where the last one ends.
    let offsets: [UInt32]

    var startIndex: Int { 0 }
    var endIndex: Int { offsets.count - 1 }

    subscript(position: Int) -> Entry {
      let offset = Int(offsets[position])
      let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
      let flags = UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 60, as: UInt16.self))
      var header = 62
      var extended: UInt16 = 0
      if flags & 0x4000 != 0 {
        extended = UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 62, as: UInt16.self))
        header = 64
      }
      var length = Int(flags & 0xFFF)
      if length == 0xFFF {
        length = strlen(UnsafeRawPointer(base + offset + header).assumingMemoryBound(to: CChar.self))
      }
      return Entry(
        offset: offset, length: Int(offsets[position + 1]) - offset,
        path: UnsafeBufferPointer(start: base + offset + header, count: length),
        stage: Int((flags >> 12) & 3),
        skipWorktree: extended & 0x4000 != 0)
    }
  }
  /// The trailing SHA-1: it names this content.
  let checksum: [UInt8]

  /// Maps the index at `path`.
  /// - Returns: nil when there is no index, or it is a version or a form
  ///   this reader leaves to libgit2.
  /// - Throws: `GIT` for a file that is not a whole index.
  static func open(_ path: String) throws -> GitIndexFile? {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else {
      if errno == ENOENT { return nil }
      throw FileSystem.error(errno, "open", path: path)
    }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { throw FileSystem.error(errno, "fstat", path: path) }
    let size = Int(st.st_size)
    guard size >= 32 else { throw corrupt(path, "it is \(size) bytes long") }
    // Not populated: a status looks at a few entries, and the pages it
    // never touches need not count against its memory.
    guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
      throw FileSystem.error(errno, "mmap", path: path)
    }
    let bytes = UnsafeRawBufferPointer(start: base, count: size)
    do {
      guard let file = try GitIndexFile(bytes: bytes, path: path) else {
        munmap(base, size)
        return nil
      }
      return file
    } catch {
      munmap(base, size)
      throw error
    }
  }

  private init?(bytes: UnsafeRawBufferPointer, path: String) throws {
    self.bytes = bytes
    func word(_ offset: Int) -> UInt32 {
      UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    guard word(0) == 0x4449_5243 else { throw Self.corrupt(path, "it does not start with DIRC") }
    version = word(4)
    // Offsets are kept in 32 bits; git's own index format is bounded so.
    guard version == 2 || version == 3, bytes.count < Int(UInt32.max) else { return nil }
    let count = Int(word(8))
    let end = bytes.count - 20
    checksum = Array(bytes[end...])
    var offsets: [UInt32] = []
    offsets.reserveCapacity(count + 1)
    var offset = 12
    // The pages walked are let go as the walk goes on, so a million
    // entries (85 MB) never all count as this process's memory at once:
    // they stay in the page cache for the lookups and the copy after.
    let release = 8 << 20
    var released = 0
    let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
    for _ in 0..<count {
      guard offset + 62 <= end else { throw Self.corrupt(path, "it ends inside an entry") }
      let flags = UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 60, as: UInt16.self))
      var header = 62
      if flags & 0x4000 != 0 {
        guard version == 3 else { throw Self.corrupt(path, "a version 2 entry has extended flags") }
        header = 64
      }
      let start = offset + header
      var length = Int(flags & 0xFFF)
      if length == 0xFFF {
        guard let nul = memchr(base + start, 0, end - start) else {
          throw Self.corrupt(path, "a path has no end")
        }
        length = UnsafeRawPointer(nul) - UnsafeRawPointer(base + start)
      }
      let padded = (header + length + 8) & ~7
      guard offset + padded <= end else { throw Self.corrupt(path, "it ends inside an entry") }
      offsets.append(UInt32(offset))
      offset += padded
      if offset - released >= release {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let upTo = offset / page * page
        madvise(
          UnsafeMutableRawPointer(mutating: bytes.baseAddress! + released), upTo - released, MADV_DONTNEED)
        released = upTo
      }
    }
    offsets.append(UInt32(offset))
    // A split index's entries are in another file (`link`), and a sparse
    // index's folder entries mean nothing without `sdir`, which a rewrite
    // would drop: both are left to libgit2.
    var next = offset
    while next + 8 <= end {
      let signature = word(next)
      if signature == 0x6C69_6E6B || signature == 0x7364_6972 { return nil }
      next += 8 + Int(word(next + 4))
    }
    entries = Entries(bytes: bytes, offsets: offsets)
  }

  deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }

  private static func corrupt(_ path: String, _ why: String) -> FolioError {
    FolioError(.git, "git's index is damaged: \(why); run 'git reset' to rebuild it", path: path)
  }

  func word(_ offset: Int) -> UInt32 {
    UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
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
      path: path, id: entry.id(in: self), stage: 0, skipWorktree: entry.skipWorktree,
      mode: word(entry.offset + 24),
      size: word(entry.offset + 36), mtimeSeconds: Int32(bitPattern: word(entry.offset + 8)),
      mtimeNanoseconds: word(entry.offset + 12), inode: word(entry.offset + 20))
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
    let common = min(a.count, b.count)
    guard common > 0 else { return (a.count - b.count).signum() }
    let result = b.withUnsafeBufferPointer { memcmp(a.baseAddress!, $0.baseAddress!, common) }
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
        try files.next(path: entry.path, mode: word(entry.offset + 24), id: entry.id(in: self))
      else { return false }
    }
    return try files.isExhausted()
  }
}
