extension RESTHandler {
  /// The answer to a request whose headers are in and whose body is not
  /// yet read, when it must not go further; nil lets it in.
  ///
  /// In this order, each before anything is read or written:
  /// 1. `Host` must be a name the server answers to (421): a page on a
  ///    name that resolves to loopback (DNS rebinding) is stopped here.
  /// 2. A browser request from another origin gets 403, unless its origin
  ///    is allowed (`--cors`, `serve: cors:`): an `Origin` that is not the
  ///    server's own, or a `Sec-Fetch-Site` that says another site asked
  ///    for anything but a page. That covers simple requests (a form POST,
  ///    `text/plain`) as well as preflights.
  /// 3. `OPTIONS` (a preflight) is answered here.
  /// 4. The token, for everything but the page (401).
  func admit(_ request: HTTPRequest) -> HTTPReply? {
    if let refusal = hostRefusal(request) ?? originRefusal(request) { return refusal }
    if request.method == "OPTIONS" {
      return withCORS(.body(status: 204, headers: [], bytes: []), for: request, preflight: true)
    }
    if isPage(request) { return nil }
    guard authorized(request) else { return withCORS(.error(401, "Unauthorized request."), for: request) }
    return nil
  }

  /// Whether the request asks for the page, which holds no data and so
  /// needs no token: it asks for one when the API answers 401.
  func isPage(_ request: HTTPRequest) -> Bool {
    (request.rawPath == "/" || request.rawPath.isEmpty)
      && (request.method == "GET" || request.method == "HEAD")
  }

  /// Whether the request carries the token, or none is needed.
  func authorized(_ request: HTTPRequest) -> Bool {
    Self.admits(token: token, credential: Self.credential(of: request))
  }

  /// Whether `credential` gets in under `token`: nil lets everyone in, and
  /// an empty token (a token file emptied, unreadable or removed) no one.
  static func admits(token: String?, credential: String?) -> Bool {
    guard let token else { return true }
    guard let credential, !token.isEmpty else { return false }
    return constantTimeEqual(credential, token)
  }

  /// The token a request carries: `Authorization: Bearer T`, else
  /// `?auth=T`, else `?access_token=T` (Firebase's parameter for an OAuth
  /// token, which some clients send instead).
  static func credential(of request: HTTPRequest) -> String? {
    if let header = request.header("authorization"), header.hasPrefix("Bearer ") {
      return String(header.dropFirst(7))
    }
    return request.query["auth"] ?? request.query["access_token"]
  }

  /// Equality whose time depends only on the lengths, so a client cannot
  /// find the token a byte at a time by timing replies.
  static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
    for i in 0..<max(x.count, y.count) {
      difference |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
    }
    return difference == 0 && x.count == y.count
  }

  // MARK: Host

  /// 421 for a `Host` that is not one of the server's names: loopback and
  /// the bound address at the server's port, or an allowed name at any
  /// port (a reverse proxy forwards its own).
  private func hostRefusal(_ request: HTTPRequest) -> HTTPReply? {
    guard let host = request.header("host"), !host.isEmpty else {
      return .error(400, "the request has no Host header")
    }
    guard let (name, port) = Self.split(host: host.lowercased()) else {
      return .error(400, "the Host header '\(host)' is not a host name and port")
    }
    let ownNames: Set<String> = ["127.0.0.1", "localhost", "[::1]", options.hostHeaderName.lowercased()]
    if ownNames.contains(name) && (port == options.port || (port == nil && options.port == 80)) { return nil }
    if allowedHosts.contains(where: { $0.lowercased() == name }) { return nil }
    return .error(
      421,
      "this server does not answer to the name '\(host)'; if it is the server's own name, start folio serve with --allow-host \(name)"
    )
  }

  /// `name` and `port` of a `Host` header value; an IPv6 address keeps its
  /// brackets.
  static func split(host: String) -> (String, Int?)? {
    if host.hasPrefix("[") {
      guard let close = host.firstIndex(of: "]") else { return nil }
      let name = String(host[...close])
      let rest = host[host.index(after: close)...]
      if rest.isEmpty { return (name, nil) }
      guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return nil }
      return (name, port)
    }
    let parts = host.split(separator: ":", omittingEmptySubsequences: false)
    switch parts.count {
    case 1: return (host, nil)
    case 2:
      guard !parts[0].isEmpty, let port = Int(parts[1]) else { return nil }
      return (String(parts[0]), port)
    default: return nil
    }
  }

  /// The names allowed now: the options' and `folio.yaml`'s.
  private var allowedHosts: [String] { options.allowedHosts + store.config.serve.allowHosts }

  // MARK: Origin

  /// The origins allowed now: the options' and `folio.yaml`'s.
  private var corsOrigins: [String] { options.corsOrigins + store.config.serve.cors }

  /// Whether `origin` may call the API across origins.
  private func allowsCrossOrigin(_ origin: String) -> Bool {
    corsOrigins.contains(origin)
  }

  /// 403 for a browser request another origin made, unless that origin is
  /// allowed.
  private func originRefusal(_ request: HTTPRequest) -> HTTPReply? {
    if let origin = request.header("origin") {
      if isOwn(origin: origin, request) || allowsCrossOrigin(origin) { return nil }
      return .error(
        403,
        "cross-origin request from \(origin) refused; to let pages from it use this server, start folio serve with --cors \(origin)"
      )
    }
    // No Origin: a client that is not a browser, or a browser's GET. The
    // browser still says who asked, and another site may ask for no more
    // than to open the page in a tab.
    switch request.header("sec-fetch-site") {
    case "cross-site", "same-site":
      if request.header("sec-fetch-mode") == "navigate"
        && (request.method == "GET" || request.method == "HEAD")
      {
        return nil
      }
      return .error(403, "cross-site request refused: only the server's own page may call it")
    default:
      return nil
    }
  }

  /// Whether `origin` is the server's own: the scheme and the `Host` the
  /// request was sent to (already checked to be one of the server's names;
  /// https when a reverse proxy adds TLS).
  private func isOwn(origin: String, _ request: HTTPRequest) -> Bool {
    guard let host = request.header("host")?.lowercased() else { return false }
    let lowered = origin.lowercased()
    return lowered == "http://" + host || lowered == "https://" + host
  }

  /// `reply` with the CORS headers an allowed origin needs to read it; a
  /// reply to any other request is unchanged.
  func withCORS(_ reply: HTTPReply, for request: HTTPRequest, preflight: Bool = false) -> HTTPReply {
    guard let origin = request.header("origin"), !isOwn(origin: origin, request), allowsCrossOrigin(origin)
    else { return reply }
    var headers = [
      ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"), ("Access-Control-Expose-Headers", "ETag"),
    ]
    if preflight {
      headers += [
        ("Access-Control-Allow-Methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS"),
        (
          "Access-Control-Allow-Headers",
          "Authorization, Content-Type, If-Match, X-Firebase-ETag, X-HTTP-Method-Override"
        ),
        ("Access-Control-Max-Age", "600"),
      ]
    }
    return reply.adding(headers: headers)
  }
}
