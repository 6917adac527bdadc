internal import CMicroHTTPD
import Glibc

/// Owns one libmicrohttpd daemon: it listens, parses HTTP, and calls
/// `handler` with each complete request, on that connection's own thread.
///
/// Thread per connection, so that an event stream can block its thread
/// waiting for events (libmicrohttpd's content-reader callback) without
/// holding up any other client.
// @unchecked: `daemon` is written in init and by `stop()`, which the owner
// calls under its own lock; libmicrohttpd guards its state across threads,
// and the other members are immutable and Sendable.
final class HTTPDaemon: @unchecked Sendable {
  private var daemon: OpaquePointer?
  private let handler: @Sendable (HTTPRequest) -> HTTPReply
  private let maxBodyBytes: Int
  private let log: (@Sendable (String) -> Void)?

  /// Starts listening on `host:port`.
  /// - Throws: `USAGE` for a host that is not an IPv4 or IPv6 address; `IO` when
  ///   the port cannot be bound.
  init(
    host: String, port: Int, maxBodyBytes: Int, maxConnections: Int, log: (@Sendable (String) -> Void)?,
    handler: @escaping @Sendable (HTTPRequest) -> HTTPReply
  ) throws {
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
        MHD_OptionItem(option: .CONNECTION_LIMIT, value: maxConnections, ptr_value: nil),
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
    if let daemon { _ = MHD_quiesce_daemon(daemon) }
  }

  /// Stops the daemon, waiting for every connection's thread to finish.
  func stop() {
    if let daemon { MHD_stop_daemon(daemon) }
    daemon = nil
  }

  deinit { stop() }

  // MARK: Callbacks

  /// One request's state between libmicrohttpd's calls: the body so far.
  /// Only the connection's own thread touches it.
  private final class PendingRequest {
    var body: [UInt8] = []
    var tooLarge = false
    let started = Clock.monotonicSeconds()
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
      // The first call only announces the request; its body follows.
      requestContext.pointee = Unmanaged.passRetained(PendingRequest()).toOpaque()
      return .YES
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
    if uploadSize.pointee > 0 {
      let count = uploadSize.pointee
      // Past the limit the rest is read and dropped, so that the client
      // gets a 413 rather than a reset connection.
      if pending.body.count + count > maxBodyBytes {
        pending.tooLarge = true
        pending.body = []
      } else if !pending.tooLarge, let uploadData {
        pending.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: count))
      }
      uploadSize.pointee = 0
      return .YES
    }
    let methodName = String(cString: method)
    let path = String(cString: url)
    let reply: HTTPReply
    if pending.tooLarge {
      reply = .error(413, "the request body is larger than the limit of \(maxBodyBytes) bytes")
    } else {
      let request = HTTPRequest(
        method: methodName, rawPath: path, query: Self.values(connection, .GET_ARGUMENT_KIND, decode: true),
        headers: Self.values(connection, .HEADER_KIND, decode: false), body: pending.body)
      reply = handler(request)
    }
    pending.body = []
    if let log {
      let micros = Int((Clock.monotonicSeconds() - pending.started) * 1e6)
      log("\(methodName) \(path) \(reply.status) \(micros)µs")
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
    var headers: [(String, String)] = [
      ("Access-Control-Allow-Origin", "*"),
      ("Access-Control-Allow-Methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS"),
      (
        "Access-Control-Allow-Headers",
        "Authorization, Content-Type, If-Match, X-Firebase-ETag, X-HTTP-Method-Override"
      ),
      ("Access-Control-Expose-Headers", "ETag"),
      ("Access-Control-Max-Age", "3600"),
    ]
    switch reply {
    case .body(_, let extra, let bytes):
      response = bytes.withUnsafeBytes { buffer in
        MHD_create_response_from_buffer(
          buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
      }
      headers += extra
    case .stream(let stream):
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
