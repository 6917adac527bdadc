/// Who may reach `folio serve` from a browser: the `serve:` section of
/// `folio.yaml`. It adds to the server's `--cors` and `--allow-host`
/// options, and a change takes effect while the server runs.
///
/// ```yaml
/// serve:
///   cors: [https://app.example.com]   # exact origins whose pages may call the API
///   allow-host: [folio.example.com]    # names the server answers to, beside loopback
/// ```
public struct ServeConfig: Sendable, Hashable {
  /// Origins (`scheme://host[:port]`) whose pages may read and write
  /// through the API, and are sent the CORS headers that let them.
  public var cors: [String]
  /// Host names (the `Host` header, without its port) the server answers
  /// to beside its own address and loopback, such as the name a reverse
  /// proxy forwards.
  public var allowHosts: [String]

  /// Creates serve settings; none by default, so only the server's own
  /// page and clients that send no `Origin` get in.
  public init(cors: [String] = [], allowHosts: [String] = []) {
    self.cors = cors
    self.allowHosts = allowHosts
  }

  /// Why `origin` cannot be a CORS origin, or nil when it can: an exact
  /// `http` or `https` origin, with a host, an optional port and nothing
  /// after, as a browser sends it in `Origin`. No wildcard, and not `null`
  /// (the origin of sandboxed frames and local files, which any page can
  /// claim).
  public static func problem(withOrigin origin: String) -> String? {
    if origin == "*" || origin.contains("*") {
      return "'\(origin)' is a wildcard; name each origin, such as https://app.example.com"
    }
    if origin == "null" {
      return "'null' is the origin of sandboxed frames and local files, which any page can claim"
    }
    let scheme: String
    if origin.hasPrefix("http://") {
      scheme = "http://"
    } else if origin.hasPrefix("https://") {
      scheme = "https://"
    } else {
      return "'\(origin)' is not an origin: it starts with http:// or https://, as in https://app.example.com"
    }
    let rest = origin.dropFirst(scheme.count)
    if rest.isEmpty || rest.contains("/") || rest.contains("?") || rest.contains("#") || rest.contains("@")
      || rest.contains(where: { $0.isWhitespace })
    {
      return "'\(origin)' is not an origin: scheme, host and port only, no path or trailing slash"
    }
    if origin != origin.lowercased() {
      return "'\(origin)' has upper-case letters; browsers send origins in lower case"
    }
    return nil
  }

  /// Why `host` cannot be an allowed host name, or nil when it can.
  public static func problem(withHost host: String) -> String? {
    if host.isEmpty || host.contains("/") || host.contains("*") || host.contains(where: { $0.isWhitespace }) {
      return "'\(host)' is not a host name; give the name alone, such as folio.example.com"
    }
    return nil
  }
}
