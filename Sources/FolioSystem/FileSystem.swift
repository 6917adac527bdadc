internal import CSystem
import Glibc

/// Thin, throwing wrappers over the syscalls the store needs.
///
/// Each call retries on `EINTR`, reads `errno` at once, and throws an error
/// that names the syscall and the path, in the manner of swift-nio's
/// `syscall(blocking:)`.
package enum FileSystem {
  /// The `errno` value a syscall failed with.
  package struct Errno: Error, Hashable {
    package var code: Int32
  }

  /// Runs `body`, a syscall that returns -1 and sets `errno` on failure,
  /// until it stops failing with `EINTR`, and reads `errno` at once. The one
  /// place that retries an interrupted call: every other helper is built on
  /// it.
  /// - Returns: the call's result, or the `errno` it failed with.
  package static func retrying<T: FixedWidthInteger>(_ body: () -> T) -> Result<T, Errno> {
    while true {
      let rc = body()
      if rc != -1 { return .success(rc) }
      let code = errno
      if code != EINTR { return .failure(Errno(code: code)) }
    }
  }

  /// Runs `body` until it stops failing with `EINTR`.
  /// - Parameter path: named in the error; only made when there is one.
  /// - Throws: `IO` naming `function` and `path` when it fails.
  @discardableResult
  package static func syscall<T: FixedWidthInteger>(
    _ function: StaticString, path: @autoclosure () -> String, _ body: () -> T
  ) throws -> T {
    switch retrying(body) {
    case .success(let value): return value
    case .failure(let failure): throw error(failure.code, function, path: path())
    }
  }

  /// Runs `body` until it stops failing with `EINTR`; a failure with one of
  /// the `errno` values in `expected` is returned for the caller to handle
  /// (`ENOENT` for a file that may be missing, `EWOULDBLOCK` for a lock
  /// held elsewhere), any other is thrown.
  /// - Throws: `IO` naming `function` and `path` for an unexpected failure.
  package static func syscall<T: FixedWidthInteger>(
    _ function: StaticString, path: @autoclosure () -> String, expecting expected: Set<Int32>, _ body: () -> T
  ) throws -> Result<T, Errno> {
    let result = retrying(body)
    if case .failure(let failure) = result, !expected.contains(failure.code) {
      throw error(failure.code, function, path: path())
    }
    return result
  }

  /// An `.io` error for `errno` value `code`; an empty `path` names none.
  package static func error(_ code: Int32, _ function: StaticString, path: String) -> FolioError {
    var error = FolioError(
      .io, String(cString: strerror(code)), path: path.isEmpty ? nil : path, function: "\(function)")
    error.systemError = code
    return error
  }

  /// The whole file, or nil if it does not exist.
  ///
  /// A link at `path` is not followed (`O_NOFOLLOW`; no extra `lstat`, so
  /// a document read stays one `open`): files in a store may come from a
  /// fetch, and a link there could point anywhere.
  /// - Throws: `UNSAFE_PATH` naming `path` if it is a symbolic link.
  package static func read(_ path: String) throws -> [UInt8]? {
    let opened = try syscall("open", path: path, expecting: [ENOENT, ENOTDIR, ELOOP]) {
      open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    }
    let fd: Int32
    switch opened {
    case .success(let opened): fd = opened
    case .failure(let failure) where failure.code == ELOOP: throw unsafePathError(path, isLink: true)
    case .failure: return nil
    }
    defer { close(fd) }
    return try readAll(fd, path: path)
  }

  /// At most `limit` bytes from the start of the file at `path` (which must
  /// exist): enough to tell a file is too large without reading it all.
  package static func readPrefix(_ path: String, limit: Int) throws -> [UInt8] {
    let fd = try syscall("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while bytes.count < limit {
      let count = try chunk.withUnsafeMutableBytes { buffer in
        try syscall("read", path: path) {
          Glibc.read(fd, buffer.baseAddress, min(buffer.count, limit - bytes.count))
        }
      }
      if count == 0 { break }
      bytes.append(contentsOf: chunk[..<count])
    }
    return bytes
  }

  /// Reads from `fd` until end of file.
  package static func readAll(_ fd: Int32, path: String) throws -> [UInt8] {
    var st = stat()
    try syscall("fstat", path: path) { fstat(fd, &st) }
    let size = max(Int(st.st_size), 0)
    let regular = (st.st_mode & S_IFMT) == S_IFREG
    // Read into uninitialized storage: zeroing a large buffer first costs
    // as much as the read (a 13 MB op log).
    var ended = false
    var bytes = try [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, initialized in
      initialized = 0
      while initialized < buffer.count {
        let n = try syscall("read", path: path) {
          Glibc.read(fd, buffer.baseAddress! + initialized, buffer.count - initialized)
        }
        if n == 0 {
          ended = true
          break
        }
        initialized += n
        // A regular file that read short at the size fstat gave is at its
        // end: skip the read that would return 0 (a syscall per document
        // of every page and export). Pseudo-files (procfs reports size 0)
        // read on.
        if regular && initialized == size {
          ended = true
          break
        }
      }
    }
    // The file grew since fstat: read on in chunks.
    var chunk = [UInt8](repeating: 0, count: ended ? 0 : 64 * 1024)
    while !ended {
      let n = try chunk.withUnsafeMutableBytes { buffer in
        try syscall("read", path: path) { Glibc.read(fd, buffer.baseAddress!, buffer.count) }
      }
      if n == 0 { break }
      bytes += chunk[..<n]
    }
    return bytes
  }

  /// Writes all of `bytes` to `fd`.
  package static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>, path: String) throws {
    let done: Void? = try bytes.withContiguousStorageIfAvailable { buffer in
      try writeAll(fd, UnsafeRawBufferPointer(buffer), path: path)
    }
    if done == nil {
      try Array(bytes).withUnsafeBytes { try writeAll(fd, $0, path: path) }
    }
  }

  private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
    var offset = 0
    while offset < buffer.count {
      let n = try syscall("write", path: path) {
        Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
      }
      // Nothing written and no error: give up rather than spin.
      if n == 0 { throw error(EIO, "write", path: path) }
      offset += n
    }
  }

  /// The name of the temporary file used to write `path` atomically. It
  /// starts with a dot, so it can never be mistaken for a document.
  package static func temporaryPath(for path: String) -> String {
    let (directory, name) = split(path)
    return directory + "/" + temporaryName(for: name)
  }

  /// Writes `bytes` to `path` atomically: temp file, optional fsync, rename.
  /// A reader or a crash sees the old file or the new one, never a mix.
  ///
  /// The temp file is made with `O_EXCL | O_NOFOLLOW`, so a link planted
  /// under the temp name never redirects the write. The folder is opened by
  /// path: for files in the store's tree use
  /// ``writeAtomically(_:_:sync:under:)``, which also refuses links on the
  /// way.
  package static func writeAtomically(_ path: String, _ bytes: [UInt8], sync: Bool) throws {
    let (directory, name) = split(path)
    let dirfd = try syscall("open", path: directory) {
      open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }
    defer { close(dirfd) }
    try writeAtomically(in: dirfd, name: name, bytes, sync: sync, path: path)
  }

  /// Flushes a directory, so that renames and unlinks inside it are durable.
  package static func syncDirectory(_ path: String) throws {
    let fd = try syscall("open", path: path) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    defer { close(fd) }
    try syscall("fsync", path: path) { fsync(fd) }
  }

  /// Flushes one file's data and size.
  package static func syncFile(_ path: String) throws {
    let fd = try syscall("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
    defer { close(fd) }
    try syscall("fsync", path: path) { fsync(fd) }
  }

  /// Whether the folder at `path` holds no entries; true if it does not
  /// exist (without reading a large folder to the end).
  package static func isEmptyDirectory(_ path: String) throws -> Bool {
    guard let dir = opendir(path) else {
      let code = errno
      if code == ENOENT { return true }
      throw error(code, "opendir", path: path)
    }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { return false }
    }
    return true
  }

  /// Flushes the whole file system that holds `path` (one call for a batch).
  package static func syncFileSystem(containing path: String) throws {
    let fd = try syscall("open", path: path) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    defer { close(fd) }
    try syscall("syncfs", path: path) { CSystem.syncfs(fd) }
  }

  /// Removes a file. Returns false if it did not exist.
  @discardableResult
  package static func remove(_ path: String) throws -> Bool {
    if unlink(path) == 0 { return true }
    let code = errno
    if code == ENOENT { return false }
    throw error(code, "unlink", path: path)
  }

  /// Creates `path` and any missing parents.
  package static func makeDirectories(_ path: String) throws {
    if isDirectory(path) { return }
    let (parent, _) = split(path)
    if !parent.isEmpty && parent != path { try makeDirectories(parent) }
    if mkdir(path, 0o755) != 0 {
      let code = errno
      if code != EEXIST { throw error(code, "mkdir", path: path) }
      return
    }
    // A new folder's name lives in its parent: flush that too.
    if !parent.isEmpty { try syncDirectory(parent) }
  }

  /// The names in a directory, without `.` and `..`; nil if it does not exist.
  package static func list(_ path: String) throws -> [String]? {
    guard let dir = opendir(path) else {
      let code = errno
      if code == ENOENT || code == ENOTDIR { return nil }
      throw error(code, "opendir", path: path)
    }
    defer { closedir(dir) }
    return names(in: dir)
  }

  /// The names in the open directory `dirfd`, without `.` and `..`; empty
  /// if it cannot be read. `dirfd` stays open.
  package static func list(inDirectory dirfd: Int32) -> [String] {
    let copy = dup(dirfd)
    guard copy >= 0 else { return [] }
    guard let dir = fdopendir(copy) else {
      close(copy)
      return []
    }
    defer { closedir(dir) }
    return names(in: dir)
  }

  private static func names(in dir: OpaquePointer) -> [String] {
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Whether a file or directory exists at `path`.
  package static func exists(_ path: String) -> Bool {
    access(path, F_OK) == 0
  }

  /// Whether `path` is a directory.
  package static func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
  }

  /// Whether `path` itself is a folder: false for a link to one.
  package static func isDirectoryNoFollow(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
  }

  /// Whether `path` is a regular file.
  ///
  /// A symlink is followed: paths that a user names on the command line
  /// (an import's input, a key file) may be links, as they may for `cat`.
  /// Paths inside a table are checked with `fstatat` and
  /// `AT_SYMLINK_NOFOLLOW` instead, where a link is hostile input.
  package static func isRegularFile(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
  }

  /// The size of the regular file open at `fd`, or nil for a pipe, a
  /// terminal or anything else whose bytes can be read only once.
  package static func regularFileSize(descriptor fd: Int32) -> Int? {
    var st = stat()
    return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : nil
  }

  /// The size of the file at `path`, or nil if there is none.
  package static func size(_ path: String) -> Int? {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : nil
  }

  /// `path` with symlinks and `..` resolved, or nil if it does not exist.
  package static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// `path` made absolute (against the working directory) with its `.` and
  /// `..` segments and repeated slashes removed by their text alone, as
  /// Foundation's `standardizedFileURL` does for a path, without its cost
  /// to a fresh process. Symlinks are not resolved: `realPath` does that.
  package static func lexicalPath(_ path: String) -> String {
    let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
    var segments: [String] = []
    for segment in absolute.split(separator: "/", omittingEmptySubsequences: true) {
      switch segment {
      case ".": continue
      case "..": _ = segments.popLast()
      default: segments.append(String(segment))
      }
    }
    return "/" + segments.concatenated(separator: "/")
  }

  /// Splits `a/b/c` into `("a/b", "c")`.
  package static func split(_ path: String) -> (directory: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let directory = String(path[..<slash])
    return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
  }

  /// The current working directory.
  package static func currentDirectory() -> String {
    guard let cwd = getcwd(nil, 0) else { return "." }
    defer { free(cwd) }
    return String(cString: cwd)
  }

  /// Fills a buffer with random bytes from the kernel.
  package static func randomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var generator = SystemRandomNumberGenerator()
    for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
    return bytes
  }
}
