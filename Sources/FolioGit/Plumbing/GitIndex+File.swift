internal import Clibgit2
import FolioSystem
import Glibc

extension GitIndex {
  /// Writes git's index file at `path` (`.git/index`) as this index's
  /// entries merged with `count` new stage-0 entries, given in path order
  /// by `entry(i)` as (index path, 20-byte blob id, file on disk: a name in
  /// the open folder `directory`, or a path with `AT_FDCWD`), each with its
  /// file's stat data so `git status` sees it clean without rehashing. A new entry replaces every stage of the same path.
  ///
  /// The file is streamed out in the documented format (version 2, or 3
  /// when an entry carries skip-worktree or intent-to-add), through
  /// `index.lock` and a rename, as git does. Adding 300k entries to
  /// libgit2's in-memory index first would hold each entry, its path and a
  /// map slot at once; this holds one buffer and the entries' order (two
  /// integers each). Extensions (the cached tree) are left out; git
  /// rebuilds them when it needs them.
  package func writeMerged(
    to path: String, count: Int,
    _ entry: (Int) -> (path: String, id: UnsafeRawBufferPointer, directory: Int32, file: String)
  ) throws {
    let order = mergedOrder(count: count, path: { entry($0).path }, removes: { _ in false })
    let extended = writesExtendedFlags(order) { _ in 0 }
    try Self.writeIndexFile(at: path) { writer in
      writer.appendHeader(entries: order.count, extended: extended)
      for (old, new) in order {
        guard new >= 0 else {
          try writer.append(git_index_get_byindex(handle, old)!.pointee)
          continue
        }
        let added = entry(new)
        var e = GitIndex.entry(
          id: GitOID(bytes: Array(added.id)), directory: added.directory, name: added.file)
        try added.path.withCString { pointer in
          e.path = pointer
          try writer.append(e)
        }
      }
    }
    // This in-memory index is now older than the file. It is not reloaded
    // here (300k entries would double the import's memory at its peak):
    // callers drop it, and the next `repository.index()` reads the file.
  }

  /// The entries an index file gets when `count` new paths, given in
  /// path order by `path(j)`, go into this index: each replaces every
  /// stage of its path, or with `removes(j)` only removes them. Each is
  /// an existing entry's position (`edit` -1) or a new path's (`existing`
  /// -1), in the file's order.
  func mergedOrder(count: Int, path: (Int) -> String, removes: (Int) -> Bool) -> [(existing: Int, edit: Int)]
  {
    let existing = git_index_entrycount(handle)
    var order: [(existing: Int, edit: Int)] = []
    order.reserveCapacity(existing + count)
    var i = 0
    var j = 0
    while i < existing || j < count {
      guard j < count else {
        order.append((i, -1))
        i += 1
        continue
      }
      let newPath = path(j)
      if i < existing, let old = git_index_get_byindex(handle, i) {
        let comparison = GitIndex.comparePaths(old.pointee.path, newPath)
        if comparison < 0 {
          order.append((i, -1))
          i += 1
          continue
        }
        if comparison == 0 {
          i += 1  // replaced or removed, with every other stage of it
          continue
        }
      }
      if !removes(j) { order.append((-1, j)) }
      j += 1
    }
    return order
  }

  /// Whether an entry of `order` carries flags that need index version 3;
  /// `newFlags(j)` gives a new entry's extended flags.
  func writesExtendedFlags(_ order: [(existing: Int, edit: Int)], newFlags: (Int) -> UInt16) -> Bool {
    order.contains { old, new in
      let flags = new >= 0 ? newFlags(new) : git_index_get_byindex(handle, old)!.pointee.flags_extended
      return flags & GitIndex.extendedMask != 0
    }
  }

  /// Writes the index file at `path` as git does: through `index.lock`
  /// (a lock a dead Folio process left is recovered first; one anyone else
  /// holds is a `LOCKED` error) and a rename. `body` appends the header and
  /// entries; the trailer is added after it.
  static func writeIndexFile(at path: String, _ body: (inout IndexFileWriter) throws -> Void) throws {
    let lockPath = path + ".lock"
    // Recovers a lock a dead Folio process left, and records this one.
    try GitIndexLock.prepare(index: path)
    defer { GitIndexLock.finish(index: path) }
    let fd = open(lockPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
    if fd < 0 {
      let code = errno
      if code == EEXIST { throw GitIndexLock.lockedError(lockPath) }
      throw FileSystem.error(code, "open", path: lockPath)
    }
    var closed = false
    var committed = false
    defer {
      if !closed { close(fd) }
      if !committed { unlink(lockPath) }
    }
    var writer = IndexFileWriter(fd: fd, path: lockPath)
    try body(&writer)
    try writer.finish()
    // One close, whatever it returns: on Linux the number is released even
    // when it fails (EINTR included), and may already be another thread's.
    closed = true
    if close(fd) != 0 { throw FileSystem.error(errno, "close", path: lockPath) }
    committed = true
    try FileSystem.syscall("rename", path: path) {
      rename(lockPath, path)
    }
  }

  /// The skip-worktree bit of an entry's extended flags: git looks for no
  /// file at its path.
  static let skipWorktreeFlag = UInt16(GIT_INDEX_ENTRY_SKIP_WORKTREE.rawValue)

  /// The extended flags that go to disk (skip-worktree, intent-to-add).
  static let extendedMask = skipWorktreeFlag | UInt16(GIT_INDEX_ENTRY_INTENT_TO_ADD.rawValue)

  /// Git's index order for paths: bytes, then the shorter first.
  static func comparePaths(_ a: UnsafePointer<CChar>, _ b: String) -> Int {
    b.withCString { Int(strcmp(a, $0)).signum() }
  }
}

/// Buffered writes of index entries, hashing every byte for the trailer.
struct IndexFileWriter {
  let fd: Int32
  let path: String
  var buffer: [UInt8] = []
  var hash = SHA1()

  init(fd: Int32, path: String) {
    self.fd = fd
    self.path = path
    buffer.reserveCapacity(1 << 20)
  }

  mutating func append(_ bytes: [UInt8]) { buffer += bytes }

  /// Bytes written as they are (entries copied from another index file),
  /// straight from their memory.
  mutating func appendRaw(_ bytes: UnsafeRawBufferPointer) throws {
    try flush()
    hash.update(bytes)
    try FileSystem.writeAll(fd, bytes, path: path)
  }

  /// The header: the signature, the version (3 when an entry has extended
  /// flags) and the number of entries.
  mutating func appendHeader(entries: Int, extended: Bool) {
    append(Array("DIRC".utf8))
    append32(extended ? 3 : 2)
    append32(UInt32(entries))
  }

  mutating func append32(_ value: UInt32) {
    withUnsafeBytes(of: value.bigEndian) { buffer += $0 }
  }

  mutating func append16(_ value: UInt16) {
    withUnsafeBytes(of: value.bigEndian) { buffer += $0 }
  }

  /// One entry: stat data, id, flags, the path and NUL padding to a
  /// multiple of 8 bytes (at least one NUL).
  mutating func append(_ e: git_index_entry) throws {
    append32(UInt32(bitPattern: e.ctime.seconds))
    append32(e.ctime.nanoseconds)
    append32(UInt32(bitPattern: e.mtime.seconds))
    append32(e.mtime.nanoseconds)
    append32(e.dev)
    append32(e.ino)
    append32(e.mode)
    append32(e.uid)
    append32(e.gid)
    append32(e.file_size)
    var id = e.id
    withUnsafeBytes(of: &id.id) { buffer += $0.prefix(20) }
    let length = strlen(e.path)
    let extendedFlags = e.flags_extended & GitIndex.extendedMask
    var flags = e.flags & UInt16(GIT_INDEX_ENTRY_STAGEMASK) | UInt16(min(length, 0xFFF))
    if e.flags & UInt16(GIT_INDEX_ENTRY_VALID.rawValue) != 0 {
      flags |= UInt16(GIT_INDEX_ENTRY_VALID.rawValue)
    }
    if extendedFlags != 0 { flags |= UInt16(GIT_INDEX_ENTRY_EXTENDED.rawValue) }
    append16(flags)
    var size = 62
    if extendedFlags != 0 {
      append16(extendedFlags)
      size += 2
    }
    buffer += UnsafeRawBufferPointer(start: e.path, count: length)
    let padded = (size + length + 8) & ~7
    buffer += repeatElement(0, count: padded - size - length)
    if buffer.count >= 1 << 20 { try flush() }
  }

  /// An entry from a mapped index whose path does not follow its fields
  /// (a split index's replacing entry): its fields, its path's length in
  /// the flags, the path and padding.
  mutating func append(copying entry: GitIndexFile.Entry) {
    buffer += UnsafeRawBufferPointer(start: entry.fields, count: 60)
    let flags = UInt16(bigEndian: entry.fields.loadUnaligned(fromByteOffset: 60, as: UInt16.self))
    append16(flags & ~0xFFF | UInt16(min(entry.path.count, 0xFFF)))
    let size = entry.extended ? 64 : 62
    if entry.extended { buffer += UnsafeRawBufferPointer(start: entry.fields + 62, count: 2) }
    buffer += entry.path
    buffer += repeatElement(0, count: (size + entry.path.count + 8) & ~7 - size - entry.path.count)
  }

  mutating func flush() throws {
    hash.update(buffer)
    try FileSystem.writeAll(fd, buffer, path: path)
    buffer.removeAll(keepingCapacity: true)
  }

  /// The trailer: the SHA-1 of everything before it, which it returns.
  @discardableResult
  mutating func finish() throws -> [UInt8] {
    hash.update(buffer)
    let checksum = hash.finish()
    buffer += checksum
    try FileSystem.writeAll(fd, buffer, path: path)
    buffer = []
    return checksum
  }
}
