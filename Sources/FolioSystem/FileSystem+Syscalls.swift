internal import CSystem
import Glibc

/// The descriptor-level syscalls Folio makes, each built on
/// ``FileSystem/retrying(_:)``: interrupted calls are retried, `errno` is
/// read at once, and a failure throws an `IO` error naming the syscall and
/// the path (swift-nio's `syscall(blocking:)`). Failures a caller expects,
/// such as a lock held elsewhere, come back as values.
extension FileSystem {
  /// `openat(2)`: `name` in the folder `dirfd`.
  /// - Parameter path: the file's path, made only for an error.
  /// - Throws: `IO` naming `openat` and `path`.
  package static func openAt(
    _ dirfd: Int32, _ name: String, _ flags: Int32, mode: UInt32 = 0o644, path: @autoclosure () -> String
  ) throws -> Int32 {
    try syscall("openat", path: path()) { Glibc.openat(dirfd, name, flags, mode) }
  }

  /// `openat(2)`, with the failures in `expected` returned, not thrown.
  package static func openAt(
    _ dirfd: Int32, _ name: String, _ flags: Int32, mode: UInt32 = 0o644, path: String,
    expecting expected: Set<Int32>
  ) throws -> Result<Int32, Errno> {
    try syscall("openat", path: path, expecting: expected) { Glibc.openat(dirfd, name, flags, mode) }
  }

  /// `open(2)` of `path`, made with `mode` when `flags` hold `O_CREAT`.
  /// - Throws: `UNSAFE_PATH` naming `path` when `flags` hold `O_NOFOLLOW`
  ///   and it is a link; `IO` otherwise.
  package static func openFile(_ path: String, _ flags: Int32, mode: UInt32 = 0o644) throws -> Int32 {
    let opened = try syscall("open", path: path, expecting: [ELOOP]) { Glibc.open(path, flags, mode) }
    switch opened {
    case .success(let fd): return fd
    case .failure: throw unsafePathError(path, isLink: true)
    }
  }

  /// `flock(2)`.
  /// - Returns: false when `operation` holds `LOCK_NB` and another open
  ///   file holds a conflicting lock.
  /// - Throws: `IO` naming `flock` and `path`.
  package static func lockFile(_ fd: Int32, _ operation: Int32, path: String) throws -> Bool {
    let outcome = try syscall("flock", path: path, expecting: [EWOULDBLOCK]) { flock(fd, operation) }
    switch outcome {
    case .success: return true
    case .failure: return false
    }
  }

  /// `socket(2)`, close-on-exec.
  package static func makeSocket(_ domain: Int32, _ type: Int32, path: String) throws -> Int32 {
    try syscall("socket", path: path) { socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), 0) }
  }

  /// `bind(2)`.
  package static func bindSocket(
    _ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, path: String
  )
    throws
  {
    try syscall("bind", path: path) { bind(fd, address, length) }
  }

  /// `accept4(2)`, close-on-exec.
  /// - Returns: the connection, or nil when none is waiting any more (the
  ///   peer gave up, or another thread took it).
  package static func acceptConnection(_ fd: Int32, path: String) throws -> Int32? {
    let result = try syscall("accept4", path: path, expecting: [EAGAIN, EWOULDBLOCK, ECONNABORTED, EPROTO]) {
      accept4(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
    }
    return try? result.get()
  }

  /// `poll(2)`. An interrupted wait is started again with the same timeout.
  /// - Returns: how many descriptors are ready; 0 when `timeout` (in
  ///   milliseconds; -1 for none) passed.
  @discardableResult
  static func poll(_ fds: inout [pollfd], timeout: Int32, path: String) throws -> Int {
    let count = nfds_t(fds.count)
    return Int(
      try fds.withUnsafeMutableBufferPointer { buffer in
        try syscall("poll", path: path) { Glibc.poll(buffer.baseAddress, count, timeout) }
      })
  }

  /// One `read(2)` into `buffer`.
  /// - Returns: the bytes read; 0 at the end.
  static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
    try syscall("read", path: path) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
  }

  /// Writes all of `bytes` to `fd`, giving up quietly at the first failure:
  /// for diagnostics on stderr, where there is nowhere left to report one.
  package static func writeBestEffort(_ fd: Int32, _ bytes: [UInt8]) {
    try? writeAll(fd, bytes, path: "")
  }

  /// `renameat2`'s `RENAME_NOREPLACE` (linux/fs.h), which Glibc does not
  /// export: fail if the target exists.
  package static let renameNoReplace: UInt32 = 1
  /// `renameat2`'s `RENAME_EXCHANGE` (linux/fs.h), which Glibc does not
  /// export: swap the two names.
  package static let renameExchange: UInt32 = 2

  /// `renameat2(2)` with `flags` (``renameExchange``, ``renameNoReplace``),
  /// which Glibc's Swift overlay does not export; for ``syscall(_:path:expecting:_:)``.
  package static func renameat2(
    _ fromFolder: Int32, _ from: String, _ toFolder: Int32, _ to: String, _ flags: UInt32
  ) -> Int32 {
    CSystem.renameat2(fromFolder, from, toFolder, to, flags)
  }

  /// `pipe2(2)`: a pipe whose ends get `flags` (`O_CLOEXEC`, `O_NONBLOCK`).
  /// - Returns: the read and write ends, which the caller closes.
  /// - Throws: `IO` naming `pipe2`.
  package static func pipe(flags: Int32) throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    try syscall("pipe2", path: "") { CSystem.pipe2(&fds, flags) }
    return (fds[0], fds[1])
  }

  /// `fstatfs(2)`'s `f_type` for the file system `fd` is on (`EXT4_SUPER_MAGIC`
  /// and the like), or nil when it cannot be read.
  package static func fileSystemType(_ fd: Int32) -> UInt64? {
    var info = statfs()
    guard fstatfs(fd, &info) == 0 else { return nil }
    return UInt64(truncatingIfNeeded: info.f_type)
  }
}
