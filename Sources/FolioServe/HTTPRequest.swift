/// One HTTP request as the REST layer sees it: libmicrohttpd's view copied
/// out into Swift values, so nothing borrowed outlives the C callback.
struct HTTPRequest: Sendable {
  /// The method, upper case, after `X-HTTP-Method-Override`.
  var method: String
  /// The path as sent, still percent-encoded, without the query string.
  var rawPath: String
  /// Decoded query parameters.
  var query: [String: String]
  /// Request headers by lower-cased name.
  var headers: [String: String]
  /// The body, complete.
  var body: [UInt8]

  func header(_ name: String) -> String? { headers[name.lowercased()] }
}
