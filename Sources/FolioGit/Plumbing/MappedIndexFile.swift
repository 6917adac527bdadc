import FolioSystem
import Glibc

/// One index file mapped read-only: `.git/index`, or the shared index
/// (`.git/sharedindex.<sha>`) a split one names. ``GitIndexFile`` reads
/// entries through it.
final class MappedIndexFile {
  /// Where the file is (for errors).
  let path: String
  /// The mapped bytes.
  let bytes: UnsafeRawBufferPointer
  /// The version (2 or 3).
  let version: UInt32
  /// Where each entry starts, in the file's order.
  let offsets: [UInt32]
  /// The trailing SHA-1: it names this content.
  let checksum: [UInt8]
  /// The `link` extension's payload: this is the changed part of a split
  /// index.
  let link: UnsafeRawBufferPointer?
  /// Whether anything follows the entries but the trailer.
  let hasExtensions: Bool

  /// Maps the index at `path`.
  /// - Returns: nil when there is no such file, or it is a version or a
  ///   form this reader leaves to libgit2: version 4 (prefix-compressed
  ///   paths) and a sparse index (`sdir`, whose folder entries mean nothing
  ///   to a rewrite that drops it).
  /// - Throws: `GIT` for a file that is not a whole index.
  static func open(_ path: String) throws -> MappedIndexFile? {
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
      guard let file = try MappedIndexFile(bytes: bytes, path: path) else {
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
    self.path = path
    self.bytes = bytes
    func word(_ offset: Int) -> UInt32 {
      UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    guard word(0) == 0x4449_5243 else { throw Self.corrupt(path, "it does not start with DIRC") }
    version = word(4)
    // Positions and offsets are kept in 31 bits; git's own index format
    // is bounded so.
    guard version == 2 || version == 3, bytes.count < Int(Int32.max) else { return nil }
    let count = Int(word(8))
    let end = bytes.count - 20
    checksum = Array(bytes[end...])
    guard count <= end / 64 else { throw Self.corrupt(path, "it claims more entries than it holds") }
    var offsets: [UInt32] = []
    offsets.reserveCapacity(count)
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
    self.offsets = offsets
    hasExtensions = offset < end
    var link: UnsafeRawBufferPointer?
    var next = offset
    while next + 8 <= end {
      let signature = word(next)
      let size = Int(word(next + 4))
      guard size <= end - next - 8 else { throw Self.corrupt(path, "an extension runs past its end") }
      if signature == 0x7364_6972 { return nil }  // sdir
      if signature == 0x6C69_6E6B {  // link
        link = UnsafeRawBufferPointer(rebasing: bytes[(next + 8)..<(next + 8 + size)])
      }
      next += 8 + size
    }
    self.link = link
  }

  deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }

  static func corrupt(_ path: String, _ why: String) -> FolioError {
    FolioError(.git, "git's index is damaged: \(why); run 'git reset' to rebuild it", path: path)
  }

  /// The entry at `position`, read in place.
  func entry(at position: Int) -> GitIndexFile.Entry {
    let fields = bytes.baseAddress! + Int(offsets[position])
    let flags = UInt16(bigEndian: fields.loadUnaligned(fromByteOffset: 60, as: UInt16.self))
    let extended = flags & 0x4000 != 0
    let header = extended ? 64 : 62
    let extendedFlags =
      extended ? UInt16(bigEndian: fields.loadUnaligned(fromByteOffset: 62, as: UInt16.self)) : 0
    var length = Int(flags & 0xFFF)
    if length == 0xFFF { length = strlen((fields + header).assumingMemoryBound(to: CChar.self)) }
    return GitIndexFile.Entry(
      fields: fields, length: (header + length + 8) & ~7,
      path: UnsafeBufferPointer(start: (fields + header).assumingMemoryBound(to: UInt8.self), count: length),
      stage: Int((flags >> 12) & 3), extended: extended, skipWorktree: extendedFlags & 0x4000 != 0)
  }
}
