internal import CZlib
internal import Clibgit2
import FolioSystem
import Foundation
import Glibc

/// A pack built in a plain file while its objects are still being decided,
/// then handed to the repository in one go.
///
/// A bulk import hashes and deflates each document as it stages it, while
/// the bytes are in hand, instead of reading 300k files back for the
/// commit. How many objects the pack will hold is known only at the end,
/// so the header's count is written last. ``store(in:)`` then writes the
/// checksum trailer and the pack's `.idx` (version 2) from what it noted
/// for each object (id, offset, CRC-32), and moves both into
/// `objects/pack`. libgit2's indexer would inflate and hash every object
/// again and copy the pack, mapping it into memory as it goes; this keeps
/// 32 bytes per object.
package final class GitPackFile {
  let path: String
  private let fd: Int32
  private var buffer: [UInt8] = []
  private var stream = z_stream()
  /// The stream for objects of ``largeObjectBytes`` and more (a table's
  /// tree), set up on first use: `stream`'s small buffers end a deflate
  /// block every 1,024 symbols, and a 4 MB tree then spends most of its
  /// time building each block's Huffman trees.
  private var largeStream = z_stream()
  private var largeStreamReady = false

  /// The size from which an object deflates through `largeStream`.
  static let largeObjectBytes = 64 << 10
  private(set) var count = 0
  private var closed = false
  /// Bytes written to the file so far (the next object's offset, once the
  /// buffer is counted in).
  private var fileOffset = 0
  /// Per object: 20-byte id, 8-byte offset, 4-byte CRC-32 of its packed bytes.
  private var entries: [UInt8] = []
  /// Set while or after the finish runs on a thread of its own.
  private var finishing: DispatchSemaphore?
  private var finishError: (any Error)?
  private var packID: [UInt8]?
  /// The finished `.idx`, until it is moved beside the pack.
  private var temporaryIndex: String?
  /// The pack file has been moved into `objects/pack`.
  private var installed = false

  /// Starts an empty pack at `path` (replacing any file there), after
  /// removing what a killed writer left beside it (``removeLeftovers(in:)``).
  package init(path: String) throws {
    self.path = path
    Self.removeLeftovers(in: FileSystem.split(path).directory)
    fd = try FileSystem.syscall("open", path: path) {
      open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    // Level 1: a pack of JSON documents deflates almost as well, and much
    // faster, than at git's default level.
    // A 4 KB window and a small hash table: documents are a few hundred
    // bytes, and deflateReset clears the hash table for every object.
    let rc = deflateInit2_(
      &stream, 1, Z_DEFLATED, 12, 4, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    guard rc == Z_OK else {
      // deinit runs for an init that throws here: it must not close again.
      close(fd)
      closed = true
      throw FolioError(.io, "zlib deflateInit failed (\(rc))", function: "deflateInit")
    }
    buffer.reserveCapacity(1 << 20)
    // The count (bytes 8..<12) is patched in by `store(in:)`.
    buffer += Array("PACK".utf8) + [0, 0, 0, 2] + [0, 0, 0, 0]
  }

  deinit {
    deflateEnd(&stream)
    if largeStreamReady { deflateEnd(&largeStream) }
    if !closed { close(fd) }
  }

  /// Appends a blob; writes its 20-byte id to `id`.
  ///
  /// With `compress: false` the blob goes in as stored deflate blocks. For
  /// a document of a few hundred bytes, zlib spends nearly all its time
  /// building the block's Huffman trees (`build_tree`, `pqdownheap`: about
  /// 30 µs per document here, at any level or strategy above 0, against
  /// 1–2 µs to copy it), to save ~40% of a small object; `git gc` later
  /// deltifies and recompresses such blobs far better anyway.
  package func addBlob(
    _ bytes: UnsafeRawBufferPointer, id: UnsafeMutableRawBufferPointer, compress: Bool = true
  )
    throws
  {
    try add(bytes, type: 3, gitType: GIT_OBJECT_BLOB, id: id, compress: compress)
  }

  /// Appends a tree object (its raw entries) and returns its id.
  package func addTree(_ bytes: [UInt8]) throws -> GitOID {
    var id = [UInt8](repeating: 0, count: 20)
    try bytes.withUnsafeBytes { raw in
      try id.withUnsafeMutableBytes { try add(raw, type: 2, gitType: GIT_OBJECT_TREE, id: $0) }
    }
    return GitOID(bytes: id)
  }

  /// Appends a whole object of `type` (a commit, tree, blob or tag; git
  /// numbers them as packs do) whose id `known` was computed when it was
  /// made (libgit2 or Folio hashed it then): it is not hashed again.
  /// `compress: false` stores it as ``addBlob(_:id:compress:)`` does.
  func add(_ bytes: [UInt8], type: git_object_t, known: GitOID, compress: Bool = true) throws {
    precondition((1...4).contains(type.rawValue), "only whole objects go into a pack")
    var id = known.bytes
    try bytes.withUnsafeBytes { raw in
      try id.withUnsafeMutableBytes {
        try add(raw, type: UInt8(type.rawValue), gitType: type, id: $0, compress: compress, hashed: true)
      }
    }
  }

  /// Appends a blob and returns its id.
  package func addBlob(_ bytes: [UInt8]) throws -> GitOID {
    var id = [UInt8](repeating: 0, count: 20)
    try bytes.withUnsafeBytes { raw in try id.withUnsafeMutableBytes { try addBlob(raw, id: $0) } }
    return GitOID(bytes: id)
  }

  /// Appends an object; writes its id to `id`, or with `hashed` takes the
  /// id already there.
  private func add(
    _ bytes: UnsafeRawBufferPointer, type: UInt8, gitType: git_object_t, id: UnsafeMutableRawBufferPointer,
    compress: Bool = true, hashed: Bool = false
  ) throws {
    precondition(!closed, "object added to a stored pack")
    if !hashed {
      var oid = git_oid()
      try LibGit2.check(git_odb_hash(&oid, bytes.baseAddress, bytes.count, gitType), "git_odb_hash")
      withUnsafeBytes(of: &oid.id) { id.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<20])) }
    }
    let start = buffer.count
    appendHeader(type: type, size: bytes.count)
    if compress { try deflate(bytes) } else { appendStored(bytes) }
    note(id: UnsafeRawBufferPointer(id), start: start)
    count += 1
    if buffer.count >= 1 << 20 { try flush() }
  }

  /// An object's header: the type and the size, 4 bits then 7 per byte.
  private func appendHeader(type: UInt8, size: Int) {
    var size = size
    var first = (type << 4) | UInt8(size & 0x0F)
    size >>= 4
    while size > 0 {
      buffer.append(first | 0x80)
      first = UInt8(size & 0x7F)
      size >>= 7
    }
    buffer.append(first)
  }

  /// Records the object that begins at `start` in the buffer and runs to
  /// its end.
  private func note(id: UnsafeRawBufferPointer, start: Int) {
    entries += id.prefix(20)
    let offset = UInt64(fileOffset + start)
    for shift in stride(from: 56, through: 0, by: -8) {
      entries.append(UInt8(truncatingIfNeeded: offset >> UInt64(shift)))
    }
    let crc = buffer.withUnsafeBytes { raw in
      UInt32(
        crc32(
          0, raw.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt8.self),
          UInt32(raw.count - start)))
    }
    for shift in stride(from: 24, through: 0, by: -8) {
      entries.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift)))
    }
  }

  /// `input` as a zlib stream of stored (uncompressed) deflate blocks,
  /// 64 KB at most each (RFC 1950, RFC 1951 §3.2.4).
  private func appendStored(_ input: UnsafeRawBufferPointer) {
    buffer += [0x78, 0x01]  // deflate, 32 KB window, no dictionary, fastest
    var offset = 0
    repeat {
      let n = min(input.count - offset, 0xFFFF)
      let final: UInt8 = offset + n == input.count ? 1 : 0
      buffer += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
      buffer += UnsafeRawBufferPointer(rebasing: input[offset..<(offset + n)])
      offset += n
    } while offset < input.count
    let sum =
      input.isEmpty
      ? 1 : UInt32(adler32(1, input.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(input.count)))
    for shift in stride(from: 24, through: 0, by: -8) {
      buffer.append(UInt8(truncatingIfNeeded: sum >> UInt32(shift)))
    }
  }

  private func deflate(_ input: UnsafeRawBufferPointer) throws {
    if input.count < Self.largeObjectBytes {
      try deflate(input, with: &stream)
      return
    }
    if !largeStreamReady {
      // Level 1 still; git's own window and buffer sizes.
      let rc = deflateInit2_(
        &largeStream, 1, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
        Int32(MemoryLayout<z_stream>.size))
      guard rc == Z_OK else {
        throw FolioError(.io, "zlib deflateInit failed (\(rc))", function: "deflateInit")
      }
      largeStreamReady = true
    }
    try deflate(input, with: &largeStream)
  }

  private func deflate(_ input: UnsafeRawBufferPointer, with stream: inout z_stream) throws {
    deflateReset(&stream)
    let bound = Int(deflateBound(&stream, UInt(input.count)))
    let start = buffer.count
    buffer.append(contentsOf: repeatElement(0, count: bound))
    let produced: Int = try buffer.withUnsafeMutableBytes { out in
      stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
      stream.avail_in = UInt32(input.count)
      stream.next_out = out.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt8.self)
      stream.avail_out = UInt32(bound)
      let rc = CZlib.deflate(&stream, Z_FINISH)
      guard rc == Z_STREAM_END else {
        throw FolioError(.io, "zlib deflate failed (\(rc))", function: "deflate")
      }
      return bound - Int(stream.avail_out)
    }
    buffer.removeLast(bound - produced)
  }

  private func flush() throws {
    guard !buffer.isEmpty else { return }
    try FileSystem.writeAll(fd, buffer, path: path)
    fileOffset += buffer.count
    buffer.removeAll(keepingCapacity: true)
  }

  /// Drops the pack (an import that failed or changed nothing).
  package func discard() {
    _ = try? waitForFinishing()
    if let temporaryIndex { unlink(temporaryIndex) }
    temporaryIndex = nil
    if !closed {
      closed = true
      close(fd)
    }
    if !installed { unlink(path) }
  }

  /// Appends the file at `filePath` as a blob, streamed, and returns its id.
  package func addBlob(file filePath: String) throws -> GitOID {
    precondition(!closed, "object added to a stored pack")
    let input = try FileSystem.syscall("open", path: filePath) { open(filePath, O_RDONLY | O_CLOEXEC) }
    defer { close(input) }
    var st = stat()
    try FileSystem.syscall("fstat", path: filePath) { fstat(input, &st) }
    let size = Int(st.st_size)
    var hash = SHA1()
    hash.update(Array("blob \(size)\0".utf8))
    // This object may span several flushes: note its offset and CRC as the
    // bytes go by.
    try flush()
    let objectOffset = fileOffset
    var crc = crc32(0, nil, 0)
    appendHeader(type: 3, size: size)
    deflateReset(&stream)
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    var out = [UInt8](repeating: 0, count: 1 << 20)
    var remaining = Int(st.st_size)
    while true {
      let n =
        remaining == 0
        ? 0
        : try chunk.withUnsafeMutableBytes { raw in
          try FileSystem.syscall("read", path: filePath) {
            read(input, raw.baseAddress, min(raw.count, remaining))
          }
        }
      if remaining > 0 && n == 0 {
        throw FolioError(.io, "the file shrank while it was being packed", path: filePath)
      }
      remaining -= n
      chunk.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      let flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH
      var rc: Int32 = Z_OK
      try chunk.withUnsafeMutableBytes { inRaw in
        stream.next_in = inRaw.baseAddress!.assumingMemoryBound(to: UInt8.self)
        stream.avail_in = UInt32(n)
        repeat {
          let produced: Int = out.withUnsafeMutableBytes { outRaw in
            stream.next_out = outRaw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            stream.avail_out = UInt32(outRaw.count)
            rc = CZlib.deflate(&stream, flush)
            return outRaw.count - Int(stream.avail_out)
          }
          guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else {
            throw FolioError(.io, "zlib deflate failed (\(rc))", function: "deflate")
          }
          buffer += out[0..<produced]
          if buffer.count >= 1 << 20 {
            crc = buffer.withUnsafeBytes {
              crc32(crc, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32($0.count))
            }
            try self.flush()
          }
        } while stream.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END)
      }
      if remaining == 0 { break }
    }
    crc = buffer.withUnsafeBytes {
      crc32(crc, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32($0.count))
    }
    let id = hash.finish()
    entries += id
    for shift in stride(from: 56, through: 0, by: -8) {
      entries.append(UInt8(truncatingIfNeeded: UInt64(objectOffset) >> UInt64(shift)))
    }
    let crc32Value = UInt32(crc)
    for shift in stride(from: 24, through: 0, by: -8) {
      entries.append(UInt8(truncatingIfNeeded: crc32Value >> UInt32(shift)))
    }
    try flush()
    count += 1
    return GitOID(bytes: id)
  }

  /// Writes the count and the checksum trailer, writes the `.idx`, and
  /// moves both into the repository's `objects/pack` (the `.idx` last: its
  /// arrival is what makes the pack visible). The objects can be read at
  /// once afterwards. If ``finishInBackground(packFolder:)`` ran, this
  /// waits for it and only moves the files.
  package func store(in repository: GitRepository) throws {
    let folder = repository.gitDirectory + "/objects/pack"
    if finishing == nil { try finish(packFolder: folder) }
    let packID = try waitForFinishing()
    defer { if !installed { unlink(path) } }
    let name = folder + "/pack-" + GitOID(bytes: packID).description
    if FileSystem.exists(name + ".pack") && FileSystem.exists(name + ".idx") {
      // The same bytes are there already (another import of the same
      // documents): keep that pack, which readers may have mapped, as git does.
      unlink(path)
      unlink(temporaryIndex!)
    } else {
      try FileSystem.syscall("rename", path: name + ".pack") { rename(path, name + ".pack") }
      try FileSystem.syscall("rename", path: name + ".idx") { rename(temporaryIndex!, name + ".idx") }
    }
    installed = true
    temporaryIndex = nil
    try FileSystem.syncDirectory(folder)
    var odb: OpaquePointer?
    try LibGit2.check(git_repository_odb(&odb, repository.handle), "git_repository_odb")
    defer { git_odb_free(odb) }
    try LibGit2.check(git_odb_refresh(odb), "git_odb_refresh")
  }

  /// Starts the part of ``store(in:)`` that needs no repository (the
  /// count, reading the pack back for its checksum, the trailer, the fsync
  /// and the `.idx`, written beside the pack in `packFolder`) on a thread
  /// of its own, so that an import's landing and commit go on meanwhile.
  /// Nothing may be added to the pack afterwards.
  package func finishInBackground(packFolder: String) {
    precondition(!closed && finishing == nil, "pack finished twice")
    // The thread has the pack to itself until `waitForFinishing()`: every
    // other use of it goes through that first.
    let pack = UncheckedSendable(value: self)
    let done = DispatchSemaphore(value: 0)
    finishing = done
    let thread = Thread {
      do { try pack.value.finish(packFolder: packFolder) } catch { pack.value.finishError = error }
      done.signal()
    }
    thread.name = "folio-pack-finish"
    thread.start()
  }

  /// Waits for a background finish, if one runs; returns the pack's id.
  private func waitForFinishing() throws -> [UInt8] {
    if let finishing {
      finishing.wait()
      finishing.signal()  // later waits return at once
    }
    if let finishError { throw finishError }
    return packID ?? []
  }

  private func finish(packFolder folder: String) throws {
    precondition(!closed, "pack stored twice")
    closed = true
    defer { close(fd) }
    try flush()
    var header: [UInt8] = [
      UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16),
      UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count),
    ]
    _ = try FileSystem.syscall("pwrite", path: path) { pwrite(fd, &header, 4, 8) }
    var hash = SHA1()
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    var offset: off_t = 0
    while true {
      let n = try chunk.withUnsafeMutableBytes { raw in
        try FileSystem.syscall("pread", path: path) { pread(fd, raw.baseAddress, raw.count, offset) }
      }
      if n == 0 { break }
      offset += off_t(n)
      chunk.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }
    let packID = hash.finish()
    try FileSystem.writeAll(fd, packID, path: path)
    try FileSystem.syscall("fsync", path: path) { fsync(fd) }
    let idx = indexBytes(packID: packID)
    entries = []
    try FileSystem.makeDirectories(folder)
    // Named after the pack's own file: two packs may be finishing at once.
    let temporary = folder + "/tmp_idx_" + String(getpid()) + "_" + FileSystem.split(path).name
    try FileSystem.writeAtomically(temporary, idx, sync: true)
    temporaryIndex = temporary
    self.packID = packID
  }

  /// The names of the files a pack writer makes beside a pack under way,
  /// each followed by the writing process's id: the pack
  /// (`tmp_folio_PID.pack`, `tmp_folio_import_PID.pack`), its index
  /// (`tmp_idx_PID_…`) and that index's own temp file (`.tmp_idx_PID_…`).
  static let leftoverPrefixes = ["tmp_folio_import_", "tmp_folio_", "tmp_idx_", ".tmp_idx_"]

  /// Removes from `folder` the files of packs whose writer is gone: a
  /// `kill -9` during a sync or an import leaves them, and nothing else
  /// would ever remove them. A writer still running keeps its files.
  static func removeLeftovers(in folder: String) {
    guard let names = try? FileSystem.list(folder) else { return }
    for name in names {
      guard let prefix = leftoverPrefixes.first(where: { name.hasPrefix($0) }) else { continue }
      let digits = name.dropFirst(prefix.count).prefix { $0.isNumber }
      guard let pid = Int32(digits), GitIndexLock.processIsGone(pid) else { continue }
      unlink(folder + "/" + name)
    }
  }

  /// The pack index, version 2: a fan-out table by first byte, the sorted
  /// ids, their CRC-32s, their offsets (31 bits, or a pointer into a table
  /// of 64-bit ones), the pack's checksum and the index's own.
  private func indexBytes(packID: [UInt8]) -> [UInt8] {
    let n = count
    let stride = 32
    return entries.withUnsafeBytes { raw -> [UInt8] in
      func id(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: raw[(i * stride)..<(i * stride + 20)])
      }
      var order = Array(0..<n)
      order.sort { a, b in memcmp(id(a).baseAddress!, id(b).baseAddress!, 20) < 0 }
      var out: [UInt8] = [0xFF, 0x74, 0x4F, 0x63, 0, 0, 0, 2]
      out.reserveCapacity(8 + 1024 + n * 28 + 40)
      func append32(_ value: UInt32) {
        for shift in Swift.stride(from: 24, through: 0, by: -8) {
          out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
      }
      var fanout = [UInt32](repeating: 0, count: 256)
      for i in 0..<n { fanout[Int(raw[i * stride])] += 1 }
      var running: UInt32 = 0
      for byte in 0..<256 {
        running += fanout[byte]
        append32(running)
      }
      for i in order { out += id(i) }
      for i in order { out += raw[(i * stride + 28)..<(i * stride + 32)] }
      var large: [UInt64] = []
      for i in order {
        var offset: UInt64 = 0
        for byte in raw[(i * stride + 20)..<(i * stride + 28)] { offset = offset << 8 | UInt64(byte) }
        if offset < 0x8000_0000 {
          append32(UInt32(offset))
        } else {
          append32(0x8000_0000 | UInt32(large.count))
          large.append(offset)
        }
      }
      for offset in large {
        append32(UInt32(truncatingIfNeeded: offset >> 32))
        append32(UInt32(truncatingIfNeeded: offset))
      }
      out += packID
      var hash = SHA1()
      hash.update(out)
      out += hash.finish()
      return out
    }
  }
}

/// Lends a value to another thread that has it to itself meanwhile.
// @unchecked: the lender touches the value only after the borrower is done.
private struct UncheckedSendable<Value>: @unchecked Sendable {
  let value: Value
}
