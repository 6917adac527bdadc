/// How `folio serve` listens, whom it lets in, and its limits.
///
/// ```swift
/// var options = ServeOptions()
/// options.port = 8471
/// let server = try RESTServer(store: store, options: options)
/// ```
public struct ServeOptions: Sendable {
  /// The address to bind: an IPv4 address, an IPv6 address (`::1`, with or
  /// without brackets), or `localhost` (127.0.0.1).
  public var host = "127.0.0.1"
  /// The TCP port.
  public var port = 8471
  /// The token requests must carry (`Authorization: Bearer T` or `?auth=T`);
  /// nil lets every request in, which is allowed on a loopback host only.
  public var token: String?
  /// A file that holds the token (its text, trimmed), read at start and
  /// again whenever it changes; it takes the place of ``token``. A changed
  /// token sends `auth_revoked` to the streams opened with the old one.
  public var tokenFile: String?
  /// No per-request log line on stderr.
  public var quiet = false
  /// The largest request body; a larger one gets 413 and nothing is written.
  public var maxBodyBytes = 16 << 20
  /// How many event streams may be open at once; one more gets 503. Each
  /// stream is a connection, so the connection limit grows with it (see
  /// ``connectionCapacity``).
  public var maxStreams = 256
  /// How many bytes of events may wait for one slow stream client before it
  /// is sent `cancel` and dropped, so that no client grows memory without bound.
  public var streamBufferBytes = 4 << 20
  /// Seconds between `keep-alive` events on an idle stream (Firebase: 30).
  public var keepAliveSeconds = 30.0
  /// Origins (`scheme://host[:port]`, exact) whose pages may call the API
  /// from a browser, and get the CORS headers that let them; the `serve:
  /// cors:` list in `folio.yaml` adds to it. Any other `Origin` but the
  /// server's own gets 403.
  public var corsOrigins: [String] = []
  /// Host names the server answers to beside loopback (`127.0.0.1`,
  /// `localhost`, `[::1]`) and ``host``, at any port: the name a reverse
  /// proxy forwards, say. A request whose `Host` is none of them gets 421,
  /// which stops DNS rebinding. `serve: allow-host:` adds to it.
  public var allowedHosts: [String] = []
  /// Connections at once, from every client, at the least: the server
  /// holds ``connectionCapacity``, which grows with ``maxStreams``.
  public var maxConnections = 1024
  /// Connections at once from one client address that are not event
  /// streams: a quarter of ``maxConnections``, so that one address cannot
  /// take every slot with requests. Streams are not counted here (each has
  /// passed the token check, and ``maxStreams`` bounds them): behind a
  /// reverse proxy on the same machine every client has one address.
  public var maxConnectionsPerAddress = 256
  /// Connections kept for requests beside ``maxStreams`` streams.
  static let requestConnections = 64

  /// The connections the server holds at once: ``maxConnections``, or
  /// ``maxStreams`` and 64 more for requests when that is larger, so that
  /// every stream allowed has a connection to run on. Past it, the
  /// connection that has waited longest for a request is closed (408) to
  /// make room; with none, the new connection gets 503.
  public var connectionCapacity: Int { max(maxConnections, maxStreams + Self.requestConnections) }
  /// Seconds a connection may send nothing (a header or body sent slowly,
  /// an idle keep-alive) before it is closed. Streams send `keep-alive`
  /// events more often than this.
  public var timeoutSeconds = 60

  /// The defaults: loopback, port 8471, no token.
  public init() {}

  /// Whether `host` only accepts connections from this machine.
  public var isLoopback: Bool {
    let bare = bareHost
    return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
  }

  /// ``host`` without the brackets of an IPv6 literal (`[::1]`).
  public var bareHost: String {
    host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
  }

  /// ``bareHost`` as it appears in a `Host` header: an IPv6 address in
  /// brackets.
  public var hostHeaderName: String {
    let bare = bareHost
    return bare.contains(":") ? "[\(bare)]" : bare
  }

  /// `http://host:port`, with an IPv6 host in brackets.
  public var url: String {
    let bare = bareHost
    return "http://" + (bare.contains(":") ? "[\(bare)]" : bare) + ":\(port)"
  }
}
