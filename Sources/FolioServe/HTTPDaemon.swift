internal import CMicroHTTPD
import FolioCore
import FolioSystem
import Glibc

/// Owns one libmicrohttpd daemon: it listens, parses HTTP, asks `admit`
/// about each request as soon as its headers are in, and calls `handler`
/// with each complete request, on that connection's own thread.
///
/// Thread per connection, so that an event stream can block its thread
/// waiting for events (libmicrohttpd's content-reader callback) without
/// holding up any other client.
///
/// A request `admit` refuses is answered before a byte of its body is read
/// (libmicrohttpd then closes the connection rather than read the rest), so
/// a client without the token costs no more than its headers. Connections
/// are bounded per client address and in all, and one that sends nothing
/// for ``Limits/timeoutSeconds`` is closed, so that half-sent requests from
/// one address cannot lock out everyone else.
// @unchecked: `daemon` and `quiescedSocket` are written in init and by
// `quiesce()` and `stop()`, which one owner thread calls once it has taken
// the daemon out from under its own lock; libmicrohttpd guards its state
// across threads, and the other members are immutable and Sendable.
final class HTTPDaemon: @unchecked Sendable {
  private var daemon: OpaquePointer?
  /// The listening socket ``quiesce()`` took back, or -1.
  private var quiescedSocket: Int32 = -1
  private let admit: @Sendable (HTTPRequest) -> HTTPReply?
  private let handler: @Sendable (HTTPRequest) -> HTTPReply
  private let maxBodyBytes: Int
  private let log: (@Sendable (String) -> Void)?

  /// How many connections the daemon holds, and for how long.
  struct Limits {
    /// Connections at once, from everyone.
    var connections: Int
    /// Connections at once from one client address; below ``connections``,
    /// so that one address cannot take every slot.
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
    var address = sockaddr_storage()
    var flags =
      UInt32(MHD_USE_THREAD_PER_CONNECTION.rawValue) | UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue)
      | UInt32(MHD_USE_ITC.rawValue)
    let numeric = host == "localhost" ? "127.0.0.1" : host
    if numeric.contains(":") {
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
      flags |= UInt32(MHD_USE_IPv6.rawValue)
    } else {
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
    if let error = folio_mhd_load_error() {
      throw FolioError(.io, "cannot load libmicrohttpd: \(String(cString: error))", function: "dlopen")
    }
    let context = Unmanaged.passUnretained(self).toOpaque()
    daemon = withUnsafeMutablePointer(to: &address) { addressPointer in
      var items: [MHD_OptionItem] = [
        MHD_OptionItem(
          option: .SOCK_ADDR, value: 0, ptr_value: UnsafeMutableRawPointer(addressPointer)),
        MHD_OptionItem(
          option: .NOTIFY_COMPLETED, value: unsafeBitCast(Self.completed, to: Int.self),
          ptr_value: context),
        // Paths and parameters come raw, to be decoded segment by segment:
        // libmicrohttpd's own unescaping would turn a key's %2F into a slash.
        MHD_OptionItem(
          option: .UNESCAPE_CALLBACK, value: unsafeBitCast(Self.keepEscaped, to: Int.self),
          ptr_value: nil),
        MHD_OptionItem(option: .CONNECTION_LIMIT, value: limits.connections, ptr_value: nil),
        MHD_OptionItem(
          option: .PER_IP_CONNECTION_LIMIT, value: limits.connectionsPerAddress, ptr_value: nil),
        MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: limits.timeoutSeconds, ptr_value: nil),
        MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
      ]
      return items.withUnsafeMutableBufferPointer { buffer in
        withVaList([
          Int32(bitPattern: MHD_OPTION.ARRAY.rawValue), buffer.baseAddress!,
          Int32(bitPattern: MHD_OPTION.END.rawValue),
        ]) { arguments in
          MHD_start_daemon_va(flags, UInt16(port), nil, nil, Self.access, context, arguments)
        }
      }
    }
    if daemon == nil {
      throw FolioError(
        .io, "cannot listen on \(host):\(port) (is the port in use?)", function: "MHD_start_daemon")
    }
  }

  /// Stops accepting connections; those open go on.
  func quiesce() {
    guard let daemon, quiescedSocket < 0 else { return }
    quiescedSocket = MHD_quiesce_daemon(daemon)
  }

  /// Stops the daemon, waiting for every connection's thread to finish.
  func stop() {
    if let daemon { MHD_stop_daemon(daemon) }
    daemon = nil
    // libmicrohttpd hands the listening socket back on quiesce, for the
    // caller to close after the stop.
    if quiescedSocket >= 0 { close(quiescedSocket) }
    quiescedSocket = -1
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

  private static let completed: MHD_RequestCompletedCallback = { _, _, requestContext, _ in
    guard let requestContext, let pending = requestContext.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(pending).release()
    requestContext.pointee = nil
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
