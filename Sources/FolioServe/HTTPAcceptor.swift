internal import CSystem
import Dispatch
import FolioCore
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// The server's listening socket, and the one thread that accepts on it.
///
/// libmicrohttpd would accept by itself, but past its limits it closes a
/// connection without a byte of reply and without a word in the log. Here
/// each connection is accepted first and offered to `onConnection`, which
/// either hands it on to libmicrohttpd or refuses it; a refused connection
/// is answered (`503` and a JSON error) before it is closed, so no client
/// is ever dropped in silence.
///
/// A refused socket is not closed at once: closing a socket with unread
/// request bytes makes the kernel send a reset, which can destroy the reply
/// before the client reads it. It is shut for writing and drained for a
/// couple of seconds ("lingering close"), a bounded number at a time.
// @unchecked: `listenFD` and `wakeFD` are set in init and closed once, in
// `stop()`, after the thread that uses them has ended; `stopped` and
// `thread` are atomic or guarded by `state`.
final class HTTPAcceptor: @unchecked Sendable {
  /// What `onConnection` says to a connection it will not take.
  struct Refusal {
    var status: Int
    var message: String
  }

  /// A peer's address: its bytes (IPv4 or IPv6, no port), for limits per
  /// address, and as text, for the log.
  struct Peer {
    var bytes: [UInt8]
    var text: String
  }

  private let listenFD: Int32
  /// An eventfd that wakes the accepting thread to stop.
  private let wakeFD: Int32
  private let state = Mutex<(started: Bool, stopped: Bool)>((false, false))
  private let finished = DispatchSemaphore(value: 0)
  private let log: (@Sendable (String) -> Void)?

  /// Refused connections drained at once at most; past this many a refusal
  /// is closed straight after its reply.
  private static let lingeringLimit = 256
  private static let lingerSeconds = 2.0

  /// Binds and listens on `host:port`.
  /// - Throws: `USAGE` for a host that is not an IPv4 or IPv6 address; `IO`
  ///   when the port cannot be bound.
  init(host: String, port: Int, log: (@Sendable (String) -> Void)?) throws {
    self.log = log
    var address = sockaddr_storage()
    let numeric = host == "localhost" ? "127.0.0.1" : host
    let length: socklen_t
    let family: Int32
    if numeric.contains(":") {
      family = AF_INET6
      length = socklen_t(MemoryLayout<sockaddr_in6>.size)
      let parsed = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
          v6.pointee.sin6_family = sa_family_t(AF_INET6)
          v6.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
          return inet_pton(AF_INET6, numeric, &v6.pointee.sin6_addr)
        }
      }
      guard parsed == 1 else {
        throw FolioError(.usage, "--host must be an IPv4 or IPv6 address or localhost, not '\(host)'")
      }
    } else {
      family = AF_INET
      length = socklen_t(MemoryLayout<sockaddr_in>.size)
      let parsed = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
          v4.pointee.sin_family = sa_family_t(AF_INET)
          v4.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
          return inet_pton(AF_INET, numeric, &v4.pointee.sin_addr)
        }
      }
      guard parsed == 1 else {
        throw FolioError(.usage, "--host must be an IPv4 or IPv6 address or localhost, not '\(host)'")
      }
    }
    let endpoint = "\(host):\(port)"
    let fd = try FileSystem.makeSocket(
      family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), path: endpoint)
    var on: Int32 = 1
    // As libmicrohttpd did: a restarted server binds at once rather than
    // wait out the old connections' TIME_WAIT.
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    if family == AF_INET6 {
      setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0, listen(fd, SOMAXCONN) == 0 else {
      let code = errno
      Glibc.close(fd)
      let reason = code == EADDRINUSE ? "another process holds the port" : String(cString: strerror(code))
      throw FolioError(.io, "cannot listen on \(endpoint): \(reason)", function: "bind")
    }
    let wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    guard wake >= 0 else {
      let code = errno
      Glibc.close(fd)
      throw FileSystem.error(code, "eventfd", path: "")
    }
    listenFD = fd
    wakeFD = wake
  }

  deinit { stop() }

  /// Starts the accepting thread. `onConnection` gets each new socket
  /// (non-blocking, close-on-exec), its peer and the peer's raw address,
  /// and either takes the socket (returns nil) or refuses it.
  func start(
    _ onConnection: @escaping @Sendable (Int32, Peer, UnsafePointer<sockaddr>, socklen_t) -> Refusal?
  ) {
    let begin = state.withLock { state -> Bool in
      defer { state.started = true }
      return !state.started && !state.stopped
    }
    guard begin else { return }
    let thread = Thread { [self] in
      run(onConnection)
      finished.signal()
    }
    thread.name = "folio-serve-accept"
    thread.start()
  }

  /// Stops accepting and closes the listening socket; connections already
  /// handed on go on. Safe to call twice.
  func stop() {
    let (wasStarted, first) = state.withLock { state -> (Bool, Bool) in
      defer { state.stopped = true }
      return (state.started, !state.stopped)
    }
    guard first else { return }
    if wasStarted {
      var one: UInt64 = 1
      _ = Glibc.write(wakeFD, &one, 8)
      finished.wait()
    }
    Glibc.close(listenFD)
    Glibc.close(wakeFD)
  }

  // MARK: The accepting thread

  private func run(_ onConnection: (Int32, Peer, UnsafePointer<sockaddr>, socklen_t) -> Refusal?) {
    var lingering: [(fd: Int32, deadline: Double)] = []
    // A descriptor held back for the moment the process runs out: it is
    // let go to accept one connection and tell it so, rather than leave it
    // waiting in the backlog with no reply.
    var reserve = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
    var backOffUntil = 0.0
    defer {
      for entry in lingering { Glibc.close(entry.fd) }
      if reserve >= 0 { Glibc.close(reserve) }
    }
    while true {
      let now = SystemClock.monotonicSeconds()
      let listening = now >= backOffUntil
      var fds = [
        pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        pollfd(fd: listening ? listenFD : -1, events: Int16(POLLIN), revents: 0),
      ]
      fds += lingering.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
      var wakeAt = lingering.map(\.deadline).min() ?? .infinity
      if !listening { wakeAt = min(wakeAt, backOffUntil) }
      let timeout = wakeAt.isFinite ? Int32(max(0, min((wakeAt - now) * 1000 + 1, 60_000))) : -1
      let ready = Glibc.poll(&fds, nfds_t(fds.count), timeout)
      if ready < 0 && errno != EINTR { backOffUntil = SystemClock.monotonicSeconds() + 0.1 }
      if fds[0].revents != 0 { return }
      // Drain and close the refused connections that are done or overdue.
      let after = SystemClock.monotonicSeconds()
      var still: [(fd: Int32, deadline: Double)] = []
      for (index, entry) in lingering.enumerated() {
        var done = after >= entry.deadline
        if !done && fds[index + 2].revents != 0 {
          var scratch = [UInt8](repeating: 0, count: 4096)
          let count = Glibc.read(entry.fd, &scratch, scratch.count)
          done = count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR)
        }
        if done { Glibc.close(entry.fd) } else { still.append(entry) }
      }
      lingering = still
      guard listening, fds[1].revents != 0 else { continue }
      // A bounded batch, so that the lingering sockets and the stop are
      // looked at between bursts.
      for _ in 0..<64 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
          CSystem.accept4(listenFD, $0, &length, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        }
        if fd < 0 {
          let code = errno
          if code == EINTR || code == ECONNABORTED || code == EPROTO { continue }
          if code == EAGAIN || code == EWOULDBLOCK { break }
          if (code == EMFILE || code == ENFILE) && reserve >= 0 {
            Glibc.close(reserve)
            reserve = -1
            refuseOutOfDescriptors()
            reserve = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            continue
          }
          log?(
            "folio serve: warning: cannot accept connections: \(String(cString: strerror(code))); trying again shortly"
          )
          backOffUntil = SystemClock.monotonicSeconds() + 0.1
          break
        }
        let peer = Self.peer(storage)
        let refusal = withUnsafePointer(to: &storage) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { onConnection(fd, peer, $0, length) }
        }
        guard let refusal else { continue }
        log?("refused \(peer.text): \(refusal.status) \(refusal.message)")
        Self.reply(to: fd, refusal)
        if lingering.count < Self.lingeringLimit {
          lingering.append((fd, SystemClock.monotonicSeconds() + Self.lingerSeconds))
        } else {
          Glibc.close(fd)
        }
      }
    }
  }

  /// Accepts one connection on the descriptor the reserve gave back, tells
  /// it why it cannot be served, and closes it.
  private func refuseOutOfDescriptors() {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let fd = withUnsafeMutablePointer(to: &storage) {
      CSystem.accept4(listenFD, $0, &length, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
    }
    guard fd >= 0 else { return }
    let refusal = Refusal(
      status: 503, message: "the server has no file descriptor left for another connection; try again")
    log?(
      "refused \(Self.peer(storage).text): 503 out of file descriptors (raise `ulimit -n`, or lower --max-streams)"
    )
    Self.reply(to: fd, refusal)
    Glibc.close(fd)
  }

  /// Writes `refusal` as a complete HTTP response (the socket's buffer is
  /// empty, so it fits), then shuts the socket for writing.
  static func reply(to fd: Int32, _ refusal: Refusal) {
    let bytes = response(status: refusal.status, message: refusal.message)
    _ = bytes.withUnsafeBytes {
      send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    }
    shutdown(fd, Int32(SHUT_WR))
  }

  /// A whole response with Firebase's error body, `{"error": "..."}`, that
  /// closes the connection.
  static func response(status: Int, message: String) -> [UInt8] {
    let reasons = [408: "Request Timeout", 503: "Service Unavailable"]
    let body = HTTPReply.errorBody(message)
    let head =
      "HTTP/1.1 \(status) \(reasons[status] ?? "Error")\r\n"
      + "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
      + (status == 503 ? "Retry-After: 1\r\n" : "") + "Connection: close\r\n\r\n"
    return Array(head.utf8) + body
  }

  private static func peer(_ storage: sockaddr_storage) -> Peer {
    var storage = storage
    let family = Int32(storage.ss_family)
    let bytes = withUnsafePointer(to: &storage) { pointer in
      if family == AF_INET6 {
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
          withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) }
        }
      }
      return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
        withUnsafeBytes(of: v4.pointee.sin_addr) { Array($0) }
      }
    }
    return Peer(bytes: bytes, text: text(of: bytes))
  }

  /// An IPv4 (4 bytes) or IPv6 (16 bytes) address as text.
  static func text(of address: [UInt8]) -> String {
    var bytes = address
    var text = [UInt8](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    let family = bytes.count == 16 ? AF_INET6 : AF_INET
    text.withUnsafeMutableBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        _ = inet_ntop(family, &bytes, $0.baseAddress, socklen_t($0.count))
      }
    }
    return String(decoding: text.prefix { $0 != 0 }, as: UTF8.self)
  }
}
