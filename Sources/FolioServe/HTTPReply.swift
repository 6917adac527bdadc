import FolioJSON

/// What the REST layer answers: a complete body, an event stream that
/// libmicrohttpd pulls from as events arrive, or an open file it sends
/// (an export, written out before the reply).
enum HTTPReply {
  case body(status: Int, headers: [(String, String)], bytes: [UInt8])
  case stream(EventStream, headers: [(String, String)] = [])
  /// `size` bytes of `descriptor`, from its start; libmicrohttpd closes it.
  case file(descriptor: Int32, size: UInt64, headers: [(String, String)])

  /// A JSON body.
  static func json(_ status: Int, _ value: JSONValue, headers: [(String, String)] = []) -> HTTPReply {
    .body(
      status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers,
      bytes: value.compactBytes())
  }

  /// Firebase's error shape: `{"error": "..."}`.
  static func error(_ status: Int, _ message: String) -> HTTPReply {
    json(status, ["error": .string(message)])
  }

  /// The bytes of Firebase's error shape, for a reply written outside
  /// libmicrohttpd (a refused connection).
  static func errorBody(_ message: String) -> [UInt8] {
    JSONValue.object(["error": .string(message)]).compactBytes()
  }

  /// The same reply with `extra` headers.
  func adding(headers extra: [(String, String)]) -> HTTPReply {
    switch self {
    case .body(let status, let headers, let bytes):
      .body(status: status, headers: headers + extra, bytes: bytes)
    case .stream(let stream, let headers): .stream(stream, headers: headers + extra)
    case .file(let descriptor, let size, let headers):
      .file(descriptor: descriptor, size: size, headers: headers + extra)
    }
  }

  var status: Int {
    switch self {
    case .body(let status, _, _): status
    case .stream, .file: 200
    }
  }
}
