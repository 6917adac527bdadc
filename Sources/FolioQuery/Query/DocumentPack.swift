import Glibc

/// A table's packed document cache, `.git/folio/index/<table>.docs`: the
/// compact bytes of its documents in one file, so that a scan reads one file
/// sequentially instead of opening every document.
///
/// Each record holds a pk, the stat data its file had when the bytes were
/// read, and the bytes. A record is only ever used for a document whose
/// file the index has just checked and found with that same stat data, and
/// only if that stat data was not racy when the bytes were read
/// (``FileStat/isRacy(checkedAt:)``): the rule the index lives by, so an
/// edit made behind Folio's back is never hidden by the cache.
///
/// Records are appended under the index lock; the file is rewritten whole
/// (temp file, rename) when it holds more dead records than live ones, or a
/// damaged one. Each record ends in a checksum, so a torn append (a kill in
/// the middle) or a damaged file is found, and what follows the damage is
/// ignored until the rewrite.
///
/// Layout (little-endian, every part padded to 8 bytes):
/// ```
/// header   "FOLIODP1", u32 signature length, u32 zero, signature, u64 checksum
/// record   u32 record length (all of it), u32 pk length, u32 bytes length,
///          u32 zero, inode, size, mtime, ctime, checkedAt (i64),
///          pk, bytes, u64 checksum of the record before it
/// ```
// @unchecked: `bytes` is immutable memory that the object owns (a private
// mapping) for its lifetime.
final class DocumentPack: @unchecked Sendable {
  static let magic = Array("FOLIODP1".utf8)
  static let recordHeaderSize = 56

  let bytes: UnsafeRawBufferPointer
  /// Where the records start.
  let recordsOffset: Int
  /// The stat data of the file when it was mapped.
  let identity: FileStat

  private init(bytes: UnsafeRawBufferPointer, recordsOffset: Int, identity: FileStat) {
    self.bytes = bytes
    self.recordsOffset = recordsOffset
    self.identity = identity
  }

  deinit {
    if bytes.count > 0 { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }
  }

  /// Maps the pack at `path`; nil when it is missing, built for another
  /// table layout, or its header is damaged.
  static func open(_ path: String, signature: String) -> DocumentPack? {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    let expected = header(signature: signature)
    guard fstat(fd, &st) == 0, Int(st.st_size) >= expected.count else { return nil }
    let size = Int(st.st_size)
    // Folio replaces a pack by rename and only appends to it otherwise, so
    // the mapped part never changes under us.
    guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
      return nil
    }
    // A scan reads it front to back.
    _ = madvise(address, size, MADV_SEQUENTIAL)
    _ = madvise(address, size, MADV_WILLNEED)
    let bytes = UnsafeRawBufferPointer(start: address, count: size)
    let pack = DocumentPack(bytes: bytes, recordsOffset: expected.count, identity: FileStat(st))
    guard expected.withUnsafeBytes({ $0.elementsEqual(bytes[0..<expected.count]) }) else { return nil }
    return pack
  }

  /// Lets go of the mapping's pages (they are read again from the page
  /// cache when next touched), so that a walk over a large pack does not
  /// count the whole file in the process's memory. The mapped bytes never
  /// change: Folio only appends to a pack or replaces it by rename.
  func releasePages() { releasePages(0..<bytes.count) }

  /// ``releasePages()`` for the pages in `range` (page-aligned at its start).
  private func releasePages(_ range: Range<Int>) {
    guard !range.isEmpty else { return }
    _ = madvise(
      UnsafeMutableRawPointer(mutating: bytes.baseAddress! + range.lowerBound), range.count, MADV_DONTNEED)
  }

  /// One record, pointing into the mapping.
  struct Record {
    var pk: UnsafeRawBufferPointer
    var document: UnsafeRawBufferPointer
    var stat: FileStat
    var checkedAt: Int64
  }

  /// Calls `body` with each intact record in file order, releasing the
  /// pages behind it as it goes (see ``releasePages()``).
  /// - Returns: false if a damaged record stopped the walk (the rest of the
  ///   file is ignored; the pack wants rewriting).
  func forEachRecord(_ body: (Record) -> Void) -> Bool {
    var offset = recordsOffset
    let end = bytes.count
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    var released = 0
    while offset < end {
      let below = offset / page * page
      if below - released >= 16 << 20 {
        releasePages(released..<below)
        released = below
      }
      guard end - offset >= Self.recordHeaderSize + 8 else { return false }
      let length = Int(IndexBase.u32(bytes, offset))
      let pkLength = Int(IndexBase.u32(bytes, offset + 4))
      let docLength = Int(IndexBase.u32(bytes, offset + 8))
      guard length % 8 == 0, length <= end - offset,
        Self.recordLength(pk: pkLength, document: docLength) == length
      else { return false }
      let sumOffset = offset + length - 8
      let sum = UInt64(bitPattern: IndexBase.i64(bytes, sumOffset))
      guard Self.checksum(UnsafeRawBufferPointer(rebasing: bytes[offset..<sumOffset])) == sum else {
        return false
      }
      let stat = FileStat(
        inode: IndexBase.i64(bytes, offset + 16), size: IndexBase.i64(bytes, offset + 24),
        mtime: IndexBase.i64(bytes, offset + 32), ctime: IndexBase.i64(bytes, offset + 40))
      let pkStart = offset + Self.recordHeaderSize
      body(
        Record(
          pk: UnsafeRawBufferPointer(rebasing: bytes[pkStart..<(pkStart + pkLength)]),
          document: UnsafeRawBufferPointer(
            rebasing: bytes[(pkStart + pkLength)..<(pkStart + pkLength + docLength)]),
          stat: stat, checkedAt: IndexBase.i64(bytes, offset + 48)))
      offset += length
    }
    return true
  }

  // MARK: Writing

  static func recordLength(pk: Int, document: Int) -> Int {
    recordHeaderSize + ((pk + document + 7) & ~7) + 8
  }

  /// The header of a pack for `signature`.
  static func header(signature: String) -> [UInt8] {
    var out = magic
    let text = Array(signature.utf8)
    out.appendLittleEndian(UInt32(text.count))
    out.appendLittleEndian(UInt32(0))
    out += text
    while out.count % 8 != 0 { out.append(0) }
    let sum = out.withUnsafeBytes { checksum($0) }
    out.appendLittleEndian(sum)
    return out
  }

  /// Appends one record to `out`.
  static func encode(
    pk: String, document: some Collection<UInt8>, stat: FileStat, checkedAt: Int64, into out: inout [UInt8]
  ) {
    let start = out.count
    let pkBytes = pk.utf8
    out.appendLittleEndian(UInt32(recordLength(pk: pkBytes.count, document: document.count)))
    out.appendLittleEndian(UInt32(pkBytes.count))
    out.appendLittleEndian(UInt32(document.count))
    out.appendLittleEndian(UInt32(0))
    for value in [stat.inode, stat.size, stat.mtime, stat.ctime, checkedAt] { out.appendLittleEndian(value) }
    out += pkBytes
    out += document
    while (out.count - start) % 8 != 0 { out.append(0) }
    let sum = out.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    out.appendLittleEndian(sum)
  }

  /// A checksum of 8-byte words (the length is a multiple of 8): it finds
  /// torn and damaged records; it is no defence against a forger, who could
  /// as well edit the documents.
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    var offset = 0
    while offset + 8 <= bytes.count {
      hash =
        (hash ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        &* 0x0000_0100_0000_01b3
      hash ^= hash >> 29
      offset += 8
    }
    return hash ^ UInt64(bytes.count)
  }
}
