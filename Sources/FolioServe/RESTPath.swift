import FolioCore
import FolioJSON
import FolioSystem

/// A location in the JSON tree a store is served as: the whole store, a
/// table (an object keyed by pk), a document, or a value inside one.
struct RESTPath: Sendable, Hashable, CustomStringConvertible {
  /// Decoded segments: table, pk, then field names.
  var segments: [String]

  var table: String? { segments.first }
  var pk: String? { segments.count > 1 ? segments[1] : nil }
  /// The path inside the document, for three segments or more.
  var field: FieldPath? { segments.count > 2 ? FieldPath(Array(segments[2...])) : nil }

  init(segments: [String]) { self.segments = segments }

  /// Parses `/todos/k1.json`. Each segment is percent-decoded on its own, so
  /// `%2F` stays inside a key (Firebase decodes keys the same way).
  /// - Throws: a message for a path without `.json` or with bad escapes.
  init(parsing raw: String) throws(RESTError) {
    guard raw.hasSuffix(".json") else {
      throw RESTError(404, "paths end with .json, as in /todos/k1.json")
    }
    let text = Substring(raw.dropLast(5))
    // `/todos/k1/.json` would be the document itself, where a client meant
    // a child with an empty name (which Firebase has none of): a DELETE of
    // it must not delete the document.
    if text.hasSuffix("/") && text.contains(where: { $0 != "/" }) {
      throw RESTError(400, "the path ends with '/.json': name a child, as in /todos/k1.json")
    }
    // Empty segments inside are dropped, as Firebase drops them:
    // `/todos//k1.json` is `/todos/k1.json`.
    segments = try text.split(separator: "/", omittingEmptySubsequences: true).map {
      part throws(RESTError) in
      guard let decoded = RESTPath.percentDecode(part), !decoded.isEmpty else {
        throw RESTError(400, "invalid path segment '\(part)'")
      }
      return decoded
    }
  }

  /// `path` with `relative` ("k1/views") appended, segment by segment.
  func appending(_ relative: String) throws(RESTError) -> RESTPath {
    let parts = relative.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    if parts.isEmpty { return self }
    return RESTPath(segments: segments + parts)
  }

  var description: String { "/" + segments.joined(separator: "/") }

  /// Percent-decodes `text` as UTF-8; nil for a bad escape or bad UTF-8.
  static func percentDecode(_ text: some StringProtocol) -> String? {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
      if byte == UInt8(ascii: "%") {
        guard let high = iterator.next().flatMap(hex), let low = iterator.next().flatMap(hex) else {
          return nil
        }
        bytes.append(high << 4 | low)
      } else {
        bytes.append(byte)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hex(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

/// A request the REST layer refuses, with the HTTP status Firebase uses.
struct RESTError: Error, Sendable {
  var status: Int
  var message: String
  /// A body to send instead of `{"error": message}` (412's current value).
  var body: JSONValue?
  var headers: [(String, String)] = []

  init(_ status: Int, _ message: String) {
    self.status = status
    self.message = message
  }

  /// The status for a Folio error: the caller's fault is 400, an unknown
  /// table 404 (writes only; reads answer null) as is a table a partial
  /// replica does not hold, anything else 500.
  init(_ error: FolioError) {
    switch error.code {
    case .localConstraint, .invalidPK, .invalidDocument, .invalidJSON, .invalidQuery, .usage, .unsafePath,
      .tooLarge:
      self.init(400, "\(error.code): \(error.message)")
    case .schemaViolation:
      self.init(400, error.description)  // names the document, line:col and the schema's path
    case .unknownTable, .notFound, .tableAbsent:
      // An absent table (a partial replica's) is said to be absent, never
      // answered as empty.
      self.init(404, "\(error.code): \(error.message)")
    case .conflict, .locked:
      self.init(409, "\(error.code): \(error.message)")
    default:
      self.init(500, error.description)
    }
  }

  var reply: HTTPReply {
    if let body { return .json(status, body, headers: headers) }
    return .json(status, ["error": .string(message)], headers: headers)
  }
}
