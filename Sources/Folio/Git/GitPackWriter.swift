internal import CZlib
internal import Clibgit2

/// Writes many objects into the repository as one pack, streamed: each
/// object is deflated and appended as it comes, and libgit2's indexer
/// (`git_odb_write_pack`) builds the `.idx` as the bytes arrive. Memory stays
/// at one buffer, whatever the number of objects; a bulk import writes
/// 300k blobs this way instead of 300k loose files.
///
/// The object count goes in the pack header, so it must be known up front.
final class GitPackWriter {
  private let writepack: UnsafeMutablePointer<git_odb_writepack>
  private var stats = git_indexer_progress()
  private var hash = SHA1()
  private var buffer: [UInt8] = []
  private var stream = z_stream()
  private let expected: Int
  private(set) var written = 0
  private var finished = false

  /// Starts a pack of `count` objects in `repository`'s object database.
  init(repository: GitRepository, count: Int) throws {
    var odb: OpaquePointer?
    try LibGit2.check(git_repository_odb(&odb, repository.handle), "git_repository_odb")
    defer { git_odb_free(odb) }
    var pack: UnsafeMutablePointer<git_odb_writepack>?
    try LibGit2.check(git_odb_write_pack(&pack, odb, nil, nil), "git_odb_write_pack")
    writepack = pack!
    expected = count
    let rc = deflateInit_(&stream, 1, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    guard rc == Z_OK else {
      writepack.pointee.free(writepack)
      throw FolioError(.io, "zlib deflateInit failed (\(rc))", function: "deflateInit")
    }
    buffer.reserveCapacity(1 << 20)
    buffer += Array("PACK".utf8) + bigEndian(2) + bigEndian(UInt32(count))
  }

  deinit {
    deflateEnd(&stream)
    writepack.pointee.free(writepack)
  }

  private func bigEndian(_ value: UInt32) -> [UInt8] {
    [
      UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
      UInt8(truncatingIfNeeded: value),
    ]
  }

  /// Appends one blob and returns its id.
  @discardableResult
  func addBlob(_ bytes: UnsafeRawBufferPointer) throws -> GitOID {
    try add(bytes, type: GIT_OBJECT_BLOB)
  }

  /// Appends one object of `type` (a blob, tree or commit, never a delta)
  /// and returns its id.
  @discardableResult
  func add(_ bytes: UnsafeRawBufferPointer, type: git_object_t) throws -> GitOID {
    precondition(written < expected, "more objects than the pack header announced")
    precondition((1...4).contains(type.rawValue), "only whole objects go into a pack")
    var oid = git_oid()
    try LibGit2.check(git_odb_hash(&oid, bytes.baseAddress, bytes.count, type), "git_odb_hash")
    // Object header: the type and the size, 4 bits then 7 per byte.
    var size = bytes.count
    var first = UInt8(truncatingIfNeeded: type.rawValue << 4) | UInt8(size & 0x0F)
    size >>= 4
    while size > 0 {
      buffer.append(first | 0x80)
      first = UInt8(size & 0x7F)
      size >>= 7
    }
    buffer.append(first)
    try deflate(bytes)
    written += 1
    if buffer.count >= 1 << 20 { try flush() }
    return GitOID(oid)
  }

  /// Appends one blob and returns its id.
  @discardableResult
  func addBlob(_ bytes: [UInt8]) throws -> GitOID {
    try bytes.withUnsafeBytes { try addBlob($0) }
  }

  private func deflate(_ input: UnsafeRawBufferPointer) throws {
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
    hash.update(buffer)
    try buffer.withUnsafeBytes { raw in
      try LibGit2.check(
        writepack.pointee.append(writepack, raw.baseAddress, raw.count, &stats), "git_odb_writepack append")
    }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Ends the pack: the checksum trailer, then the index and a refresh so
  /// the objects can be read at once.
  func finish() throws {
    precondition(!finished && written == expected, "pack finished with \(written) of \(expected) objects")
    finished = true
    hash.update(buffer)
    buffer += hash.finish()
    try buffer.withUnsafeBytes { raw in
      try LibGit2.check(
        writepack.pointee.append(writepack, raw.baseAddress, raw.count, &stats), "git_odb_writepack append")
    }
    buffer = []
    try LibGit2.check(writepack.pointee.commit(writepack, &stats), "git_odb_writepack commit")
  }
}
