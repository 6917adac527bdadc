internal import CMicroHTTPD
import FolioCore
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// Owns one libmicrohttpd daemon: it parses HTTP, asks `admit` about each
/// request as soon as its headers are in, and calls `handler` with each
/// complete request, on that connection's own thread.
///
/// Thread per connection, so that an event stream can block its thread
/// waiting for events (libmicrohttpd's content-reader callback) without
/// holding up any other client. Each thread waits with `poll`, not
/// `select`, whose descriptor sets end at 1,024: a server holding a
/// thousand streams has sockets numbered past that.
///
/// A request `admit` refuses is answered before a byte of its body is read
/// (libmicrohttpd then closes the connection rather than read the rest), so
/// a client without the token costs no more than its headers.
///
/// The daemon does not accept connections itself: ``HTTPAcceptor`` does,
/// and each new one is weighed against the ``ConnectionTable`` (its limits
/// in all and per address, and the eviction of the connection that has
/// waited longest for a request) before libmicrohttpd gets it. A connection
/// refused there is answered 503; one evicted is answered 408. Either way
/// the client gets a reply and the log a line. A connection that sends
/// nothing for ``Limits/timeoutSeconds`` is closed.
// @unchecked: `daemon` is written in init and by `stop()`, which one owner
// thread calls once it has taken the daemon out from under its own lock;
// libmicrohttpd guards its state across threads, `connections` is a Mutex,
// and the other members are immutable and Sendable.
final class HTTPDaemon: @unchecked Sendable {
  private var daemon: OpaquePointer?
  private let acceptor: HTTPAcceptor
  private let connections: Mutex<ConnectionTable>
  private let admit: @Sendable (HTTPRequest) -> HTTPReply?
  private let handler: @Sendable (HTTPRequest) -> HTTPReply
  private let maxBodyBytes: Int
  private let log: (@Sendable (String) -> Void)?

  /// How many connections the daemon holds, and for how long.
  struct Limits {
    /// Connections at once, from everyone.
    var connections: Int
    /// Connections at once from one client address that are not event
    /// streams, so that one address cannot take every slot with requests.
    var connectionsPerAddress: Int
    /// Seconds a connection may send nothing (a slow header or body, an idle
    /// keep-alive) before it is closed.
    var timeoutSeconds: Int
  }

  /// Starts listening on `host:port`.
  /// - Parameters:
  ///   - admit: called with a request whose headers are in and whose body is
  ///     not yet read; a reply it returns is sent at once, and the body never
  ///     read.
  ///   - handler: called with each admitted request, body complete.
  /// - Throws: `USAGE` for a host that is not an IPv4 or IPv6 address; `IO` when
  ///   the port cannot be bound.
  init(
    host: String, port: Int, maxBodyBytes: Int, limits: Limits, log: (@Sendable (String) -> Void)?,
    admit: @escaping @Sendable (HTTPRequest) -> HTTPReply?,
    handler: @escaping @Sendable (HTTPRequest) -> HTTPReply
  ) throws {
    self.admit = admit
    self.handler = handler
    self.maxBodyBytes = maxBodyBytes
    self.log = log
    let table = ConnectionTable(capacity: limits.connections, perAddress: limits.connectionsPerAddress)
    connections = Mutex(table)
    if let error = folio_mhd_load_error() {
      throw FolioError(.io, "cannot load libmicrohttpd: \(String(cString: error))", function: "dlopen")
    }
    acceptor = try HTTPAcceptor(host: host, port: port, log: log)
    let flags =
      UInt32(MHD_USE_THREAD_PER_CONNECTION.rawValue) | UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue)
      | UInt32(MHD_USE_ITC.rawValue) | UInt32(MHD_USE_POLL.rawValue)
      | UInt32(MHD_USE_NO_LISTEN_SOCKET.rawValue)
    let context = Unmanaged.passUnretained(self).toOpaque()
    var items: [MHD_OptionItem] = [
      MHD_OptionItem(
        option: .NOTIFY_COMPLETED, value: unsafeBitCast(Self.completed, to: Int.self), ptr_value: context),
      MHD_OptionItem(
        option: .NOTIFY_CONNECTION, value: unsafeBitCast(Self.connectionEvent, to: Int.self),
        ptr_value: context),
      // Paths and parameters come raw, to be decoded segment by segment:
      // libmicrohttpd's own unescaping would turn a key's %2F into a slash.
      MHD_OptionItem(
        option: .UNESCAPE_CALLBACK, value: unsafeBitCast(Self.keepEscaped, to: Int.self), ptr_value: nil),
      // The table decides; this is only a backstop above it and the
      // evicted connections still closing, never reached.
      MHD_OptionItem(
        option: .CONNECTION_LIMIT, value: table.capacity + table.closingAllowance + 16, ptr_value: nil),
      MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: limits.timeoutSeconds, ptr_value: nil),
      MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
    ]
    daemon = items.withUnsafeMutableBufferPointer { buffer in
      withVaList([
        Int32(bitPattern: MHD_OPTION.ARRAY.rawValue), buffer.baseAddress!,
        Int32(bitPattern: MHD_OPTION.END.rawValue),
      ]) { arguments in
        MHD_start_daemon_va(flags, 0, nil, nil, Self.access, context, arguments)
      }
    }
    guard daemon != nil else {
      acceptor.stop()
      throw FolioError(.io, "cannot start the HTTP server on \(host):\(port)", function: "MHD_start_daemon")
    }
    acceptor.start { [unowned self] socket, peer, address, length in
      self.offer(socket, from: peer, address: address, length: length)
    }
  }

  /// Weighs a new connection against the table, evicting the one that has
  /// waited longest for a request if it must, and hands it to libmicrohttpd.
  private func offer(
    _ socket: Int32, from peer: HTTPAcceptor.Peer, address: UnsafePointer<sockaddr>, length: socklen_t
  ) -> HTTPAcceptor.Refusal? {
    guard let daemon else { return HTTPAcceptor.Refusal(status: 503, message: "the server is stopping") }
    let now = SystemClock.monotonicSeconds()
    let (admission, evicted) = connections.withLock {
      table -> (ConnectionTable.Admission, ConnectionTable.Entry?) in
      let admission = table.admit(socket, from: peer.bytes, now: now)
      guard case .admit(let evicting?) = admission else { return (admission, nil) }
      // Under the lock: libmicrohttpd reports a connection closed (which
      // takes the lock) before it closes the socket, so while its entry is
      // here the descriptor is still that connection's, not a reused number.
      HTTPAcceptor.reply(
        to: evicting,
        HTTPAcceptor.Refusal(
          status: 408, message: "closed without a complete request, to make room for another connection"))
      shutdown(evicting, Int32(SHUT_RDWR))
      return (admission, table.entry(evicting))
    }
    if case .refuse(let message) = admission { return HTTPAcceptor.Refusal(status: 503, message: message) }
    if let evicted, let log {
      let seconds = String(format: "%.1f", now - evicted.since)
      log(
        "evicted \(HTTPAcceptor.text(of: evicted.address)): 408 no request after \(seconds) s, to make room for \(peer.text)"
      )
    }
    if MHD_add_connection(daemon, socket, address, length) != .YES {
      // libmicrohttpd has closed the socket; there is nothing left to answer on.
      let code = errno
      connections.withLock { $0.remove(socket) }
      log?(
        "dropped \(peer.text): libmicrohttpd could not take the connection: \(String(cString: strerror(code)))"
      )
    }
    return nil
  }

  /// Stops accepting connections; those open go on.
  func quiesce() {
    acceptor.stop()
  }

  /// Stops the daemon, waiting for every connection's thread to finish.
  func stop() {
    acceptor.stop()
    if let daemon { MHD_stop_daemon(daemon) }
    daemon = nil
  }

  deinit { stop() }

  // MARK: Callbacks

  /// One request's state between libmicrohttpd's calls: the request as
  /// its headers gave it, and the body so far. Only the connection's own
  /// thread touches it.
  private final class PendingRequest {
    var request: HTTPRequest
    var tooLarge = false
    let started = SystemClock.monotonicSeconds()
    init(_ request: HTTPRequest) { self.request = request }
  }

  private static let access: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, uploadData, uploadSize, requestContext in
    let daemon = Unmanaged<HTTPDaemon>.fromOpaque(context!).takeUnretainedValue()
    return daemon.access(connection!, url!, method!, uploadData, uploadSize!, requestContext!)
  }

  private static let completed: MHD_RequestCompletedCallback = { context, connection, requestContext, _ in
    if let context, let connection {
      // Between requests a keep-alive connection waits for the next one's
      // headers, and may be evicted like one that never sent any.
      Unmanaged<HTTPDaemon>.fromOpaque(context).takeUnretainedValue().set(connection, to: .awaitingRequest)
    }
    guard let requestContext, let pending = requestContext.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(pending).release()
    requestContext.pointee = nil
  }

  private static let connectionEvent: MHD_NotifyConnectionCallback = { context, connection, _, event in
    guard let context, let connection, event == .CONNECTION_NOTIFY_CLOSED else { return }
    let daemon = Unmanaged<HTTPDaemon>.fromOpaque(context).takeUnretainedValue()
    let socket = folio_mhd_connection_fd(connection)
    daemon.connections.withLock { $0.remove(socket) }
  }

  private func set(_ connection: OpaquePointer, to phase: ConnectionTable.Phase) {
    let socket = folio_mhd_connection_fd(connection)
    let now = SystemClock.monotonicSeconds()
    connections.withLock { $0.set(socket, to: phase, now: now) }
  }

  private static let keepEscaped:
    @convention(c) (
      UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?
    ) -> Int = { _, _, text in
      text.map { strlen($0) } ?? 0
    }

  private func access(
    _ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ method: UnsafePointer<CChar>,
    _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
  ) -> MHD_Result {
    guard let raw = requestContext.pointee else {
      // The first call: the headers are in, the body (if any) not yet read.
      let request = HTTPRequest(
        method: String(cString: method), rawPath: String(cString: url),
        query: Self.values(connection, .GET_ARGUMENT_KIND, decode: true),
        headers: Self.values(connection, .HEADER_KIND, decode: false), body: [])
      let pending = PendingRequest(request)
      requestContext.pointee = Unmanaged.passRetained(pending).toOpaque()
      set(connection, to: .busy)
      if let refusal = admit(request) ?? tooLarge(request) {
        return respond(refusal, to: pending, on: connection)
      }
      return .YES
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
    if uploadSize.pointee > 0 {
      let count = uploadSize.pointee
      // A body without a length (chunked) is read to its end past the
      // limit and dropped, so that the client gets a 413 rather than a
      // reset connection; memory stays at the limit.
      if pending.request.body.count + count > maxBodyBytes {
        pending.tooLarge = true
        pending.request.body = []
      } else if !pending.tooLarge, let uploadData {
        pending.request.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: count))
      }
      uploadSize.pointee = 0
      return .YES
    }
    let reply = pending.tooLarge ? tooLargeReply : handler(pending.request)
    pending.request.body = []
    return respond(reply, to: pending, on: connection)
  }

  /// A 413 for a request whose `Content-Length` is over the limit, before
  /// its body is read.
  private func tooLarge(_ request: HTTPRequest) -> HTTPReply? {
    guard let text = request.header("content-length"), let length = Int(text), length > maxBodyBytes else {
      return nil
    }
    return tooLargeReply
  }

  private var tooLargeReply: HTTPReply {
    .error(413, "the request body is larger than the limit of \(maxBodyBytes) bytes")
  }

  private func respond(_ reply: HTTPReply, to pending: PendingRequest, on connection: OpaquePointer)
    -> MHD_Result
  {
    if let log {
      let micros = Int((SystemClock.monotonicSeconds() - pending.started) * 1e6)
      log("\(pending.request.method) \(pending.request.rawPath) \(reply.status) \(micros)µs")
    }
    if case .stream = reply { set(connection, to: .stream) }
    return Self.queue(reply, on: connection)
  }

  /// Headers (lower-cased names) or query parameters (percent-decoded).
  private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, decode: Bool) -> [String:
    String]
  {
    final class Collected {
      var values: [String: String] = [:]
      let decode: Bool
      init(decode: Bool) { self.decode = decode }
    }
    let collected = Collected(decode: decode)
    let iterator: MHD_KeyValueIterator = { context, _, key, value in
      let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
      guard let key else { return .YES }
      let name = String(cString: key)
      let text = value.map { String(cString: $0) } ?? ""
      if collected.decode {
        if let name = RESTPath.percentDecode(name) {
          collected.values[name] = RESTPath.percentDecode(text) ?? text
        }
      } else {
        collected.values[name.lowercased()] = text
      }
      return .YES
    }
    withExtendedLifetime(collected) {
      _ = MHD_get_connection_values(
        connection, kind, iterator, Unmanaged.passUnretained(collected).toOpaque())
    }
    return collected.values
  }

  private static func queue(_ reply: HTTPReply, on connection: OpaquePointer) -> MHD_Result {
    let response: OpaquePointer?
    var headers: [(String, String)] = []
    switch reply {
    case .body(_, let extra, let bytes):
      response = bytes.withUnsafeBytes { buffer in
        MHD_create_response_from_buffer(
          buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
      }
      headers += extra
    case .stream(let stream, let extra):
      headers += extra
      // The stream watches its socket, so that a client that leaves frees
      // its slot at once rather than at the next keep-alive.
      stream.watchHangUp(of: folio_mhd_connection_fd(connection))
      response = MHD_create_response_from_callback(
        UInt64.max, 16 * 1024, Self.readStream, Unmanaged.passRetained(stream).toOpaque(), Self.freeStream)
      headers += [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]
    case .file(let descriptor, let size, let extra):
      headers += extra
      // Sent from the file by the kernel; the response owns the descriptor
      // from here on, and closes it when done (or at once, on failure).
      response = MHD_create_response_from_fd64(size, descriptor)
      if response == nil { close(descriptor) }
    }
    guard let response else { return .NO }
    for (name, value) in headers { _ = MHD_add_response_header(response, name, value) }
    let result = MHD_queue_response(connection, UInt32(reply.status), response)
    MHD_destroy_response(response)
    return result
  }

  private static let readStream: MHD_ContentReaderCallback = { context, _, buffer, max in
    let stream = Unmanaged<EventStream>.fromOpaque(context!).takeUnretainedValue()
    guard let count = stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) else {
      return -1  // MHD_CONTENT_READER_END_OF_STREAM
    }
    return count
  }

  private static let freeStream: MHD_ContentReaderFreeCallback = { context in
    let stream = Unmanaged<EventStream>.fromOpaque(context!).takeRetainedValue()
    stream.finish()
  }
}
