import FolioSystem
import Glibc

/// A pack check (``PackValidation``) saved for the next process,
/// `.git/folio/index/<table>.docs.check`: which record holds each document
/// of one index base, for one state of the pack. A process whose index is
/// that base alone (no overlay) and whose pack has the same stat data reads
/// a few megabytes instead of walking and checksumming the whole pack: for
/// a filter through a fresh `folio query`, that walk was half the process.
///
/// The pack is only ever appended to or replaced by rename, so equal stat
/// data (inode, size, mtime, ctime) means equal bytes; the base's
/// generation is drawn at random each time one is written. A check saved
/// for anything else is ignored, and a damaged one (its checksum) too.
///
/// Layout (little-endian): "FOLIOPC1", generation, the pack's inode, size,
/// mtime and ctime, the document count `n`, the record count `m`, then
/// `n` offsets (i64), `n` checkedAt (i64), `n` lengths (i32), `m` ids in
/// pack order (i32), zero padding to 8 bytes, and a checksum of it all
/// (``DocumentPack/checksum(_:)``).
enum PackCheckFile {
  static let magic = Array("FOLIOPC1".utf8)
  private static let headerSize = 8 + 8 + 32 + 8 + 8

  /// The saved check for a pack at `packPath` with `identity`, against a
  /// base of `count` documents with `generation`; nil when there is none
  /// for exactly that.
  static func read(packPath: String, identity: FileStat, generation: UInt64, count: Int) -> (
    offsets: [Int], lengths: [Int32], checkedAt: [Int64], order: [Int32]
  )? {
    let fd = open(packPath + ".check", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, Int(st.st_size) >= headerSize + 8, Int(st.st_size) % 8 == 0 else { return nil }
    let size = Int(st.st_size)
    // Mapped, not read: the arrays are copied out of it once.
    guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
      return nil
    }
    defer { munmap(address, size) }
    let raw = UnsafeRawBufferPointer(start: address, count: size)
    func i64(_ offset: Int) -> Int64 { IndexBase.i64(raw, offset) }
    guard raw.prefix(8).elementsEqual(magic), UInt64(bitPattern: i64(8)) == generation,
      FileStat(inode: i64(16), size: i64(24), mtime: i64(32), ctime: i64(40)) == identity,
      i64(48) == Int64(count)
    else { return nil }
    let m = Int(i64(56))
    guard m >= 0, m <= count, Self.size(count: count, records: m) == size,
      DocumentPack.checksum(UnsafeRawBufferPointer(rebasing: raw[..<(size - 8)]))
        == UInt64(bitPattern: i64(size - 8))
    else { return nil }
    var at = headerSize
    func array<T: FixedWidthInteger>(_ n: Int, _: T.Type) -> [T] {
      let width = T.bitWidth / 8
      let values = [T](unsafeUninitializedCapacity: n) { out, initialized in
        UnsafeMutableRawBufferPointer(out).copyMemory(
          from: UnsafeRawBufferPointer(rebasing: raw[at..<(at + n * width)]))
        initialized = n
      }
      at += n * width
      return values.map { T(littleEndian: $0) }
    }
    let offsets = array(count, Int64.self).map { Int($0) }
    let checkedAt = array(count, Int64.self)
    let lengths = array(count, Int32.self)
    let order = array(m, Int32.self)
    // Checked anyway, so that no saved number reads outside the pack.
    for id in order where id < 0 || Int(id) >= count { return nil }
    for id in 0..<count where offsets[id] >= 0 {
      guard lengths[id] >= 0, offsets[id] + Int(lengths[id]) <= Int(identity.size) else { return nil }
    }
    return (offsets, lengths, checkedAt, order)
  }

  /// Saves `validation`, made for a base with `generation`, under the index
  /// lock at `lockPath` if it is free (temp file, then rename).
  static func write(_ validation: PackValidation, packPath: String, generation: UInt64, lockPath: String) {
    guard let identity = validation.packIdentity else { return }
    let count = validation.offsets.count
    var out = magic
    out.reserveCapacity(size(count: count, records: validation.order.count))
    out.appendLittleEndian(generation)
    for value in [identity.inode, identity.size, identity.mtime, identity.ctime] {
      out.appendLittleEndian(value)
    }
    out.appendLittleEndian(Int64(count))
    out.appendLittleEndian(Int64(validation.order.count))
    for offset in validation.offsets { out.appendLittleEndian(Int64(offset)) }
    for time in validation.checkedAt { out.appendLittleEndian(time) }
    for length in validation.lengths { out.appendLittleEndian(length) }
    for id in validation.order { out.appendLittleEndian(id) }
    while out.count % 8 != 0 { out.append(0) }
    out.appendLittleEndian(out.withUnsafeBytes { DocumentPack.checksum($0) })
    IndexNames.withLock(lockPath, blocking: false) {
      // The pack may have moved on since the check: then this is stale.
      guard FileStat.of(packPath) == identity else { return }
      try? FileSystem.writeAtomically(packPath + ".check", out, sync: false)
    }
  }

  private static func size(count: Int, records: Int) -> Int {
    (headerSize + count * 20 + records * 4 + 7) / 8 * 8 + 8
  }
}
