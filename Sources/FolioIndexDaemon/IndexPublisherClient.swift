import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Asks a running ``IndexPublisher`` whether a table's index files describe
/// its folder now (rule 2 in ``TableIndex``'s `verify`), over its socket:
/// one line of JSON each way.
enum IndexPublisherClient {
  /// How long to wait for an answer. A publisher's first check of a large
  /// table takes a full stat check; waiting longer than one would take here
  /// gains nothing.
  static let timeout = timeval(tv_sec: 2, tv_usec: 0)

  /// The publisher's answer for `table`, or nil when there is no publisher,
  /// it does not answer in time, or it cannot vouch for the table.
  static func ask(indexDirectory: String, table: String, signature: String) -> PublisherAnswer? {
    var reached = false
    return ask(indexDirectory: indexDirectory, table: table, signature: signature, reached: &reached)
  }

  /// The same, and `reached` says whether a publisher took the connection.
  /// - Parameter reached: set to whether a publisher took the connection
  ///   (false: none runs, so an index daemon may be started).
  static func ask(indexDirectory: String, table: String, signature: String, reached: inout Bool)
    -> PublisherAnswer?
  {
    guard let socket = connect(indexDirectory: indexDirectory) else {
      reached = false
      return nil
    }
    reached = true
    defer { close(socket) }
    let request: JSONValue = ["check": .string(table), "signature": .string(signature)]
    guard send(socket, request.compactBytes() + [UInt8(ascii: "\n")]),
      let line = receiveLine(socket), let json = try? JSONValue(parsing: line)
    else { return nil }
    return PublisherAnswer(json: json)
  }

  /// The publisher's ``ChangedFiles`` since `token`, or nil when there is
  /// no publisher, it does not answer in time, or it keeps no journal.
  static func changedFiles(indexDirectory: String, since token: String?, reached: inout Bool) -> ChangedFiles?
  {
    guard let socket = connect(indexDirectory: indexDirectory) else {
      reached = false
      return nil
    }
    reached = true
    defer { close(socket) }
    let request: JSONValue = ["changes": token.map { .string($0) } ?? .null]
    guard send(socket, request.compactBytes() + [UInt8(ascii: "\n")]),
      let line = receiveLine(socket), let json = try? JSONValue(parsing: line)
    else { return nil }
    return ChangedFiles(json: json)
  }

  /// A connected socket to the publisher of `indexDirectory`, or nil.
  static func connect(indexDirectory: String) -> Int32? {
    guard let fd = try? FileSystem.makeSocket(AF_UNIX, Int32(SOCK_STREAM.rawValue), path: indexDirectory)
    else { return nil }
    var timeout = Self.timeout
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withSocketAddress(indexDirectory: indexDirectory) { address, length in
      // A unix socket's connect interrupted while it waited for room in the
      // backlog left the socket unconnected: it may be tried again.
      (try? FileSystem.retrying { Glibc.connect(fd, address, length) }.get()) != nil
    }
    if connected != true {
      close(fd)
      return nil
    }
    return fd
  }

  /// Calls `body` with the address of the publisher's socket. A path too
  /// long for `sun_path` is reached through the folder's descriptor.
  static func withSocketAddress<R>(
    indexDirectory: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R
  ) rethrows -> R? {
    var path = indexDirectory + "/" + IndexPublisher.socketName
    var dirfd: Int32 = -1
    defer { if dirfd >= 0 { close(dirfd) } }
    var address = sockaddr_un()
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    if path.utf8.count >= capacity {
      dirfd = open(indexDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      guard dirfd >= 0 else { return nil }
      path = FileSystem.descriptorPath(dirfd) + "/" + IndexPublisher.socketName
    }
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      for (i, byte) in path.utf8.enumerated() { buffer[i] = byte }
      buffer[path.utf8.count] = 0
    }
    return try withUnsafePointer(to: &address) { pointer in
      try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        try body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }

  /// Sends all of `bytes`; false on any failure (never raises SIGPIPE).
  static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes.withUnsafeBytes { buffer in
        FileSystem.retrying {
          Glibc.send(fd, buffer.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
      }
      guard case .success(let n) = sent else { return false }
      offset += n
    }
    return true
  }

  /// One line (without its newline), at most 64 KiB; nil on timeout, end of
  /// stream or error.
  static func receiveLine(_ fd: Int32) -> [UInt8]? {
    var line: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while line.count < 65536 {
      let received = buffer.withUnsafeMutableBytes { raw in
        FileSystem.retrying { recv(fd, raw.baseAddress!, raw.count, 0) }
      }
      guard case .success(let n) = received, n > 0 else { return nil }
      if let newline = buffer[0..<n].firstIndex(of: UInt8(ascii: "\n")) {
        return line + buffer[0..<newline]
      }
      line += buffer[0..<n]
    }
    return nil
  }
}
