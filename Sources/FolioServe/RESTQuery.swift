import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem

/// Firebase's query parameters (`orderBy`, `startAt`, …, `limitToLast`),
/// JSON-encoded as its clients send them, turned into a Folio ``Query`` so
/// that the query engine and its indexes do the work.
///
/// Three more are Folio's own, for the page and other clients that page
/// through a table ordered by a child: `startKey` and `endKey` (JSON
/// strings) break ties at the range's bounds by pk, as the SDKs' two-argument
/// `startAt(value, key)` does, and `where` filters with the CLI's
/// expression language (`views > 3 && done == false`).
struct RESTQuery: Sendable {
  private(set) var orderBy: String?
  private(set) var bounds: [(name: String, value: JSONValue)] = []
  private(set) var limits: [(name: String, count: Int)] = []
  private(set) var startKey: String?
  private(set) var endKey: String?
  private(set) var filter: String?

  static let parameterNames = [
    "orderBy", "startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast",
    "startKey", "endKey", "where",
  ]

  /// Whether any query parameter was given.
  var isEmpty: Bool { orderBy == nil && bounds.isEmpty && limits.isEmpty && filter == nil }

  /// Reads the parameters. Messages follow Firebase's where it has one.
  init(_ parameters: [String: String]) throws(RESTError) {
    if let text = parameters["orderBy"] {
      guard case .string(let path)? = try? JSONValue(parsing: text) else {
        throw RESTError(400, "orderBy must be a valid JSON encoded path")
      }
      orderBy = path
    }
    for name in ["startAt", "startAfter", "endAt", "endBefore", "equalTo"] {
      guard let text = parameters[name] else { continue }
      guard let value = try? JSONValue(parsing: text) else {
        throw RESTError(400, "\(name) must be a valid JSON value, such as \"a\" or 3 (got \(text))")
      }
      switch value {
      case .object, .array: throw RESTError(400, "\(name): constraint index field must be a JSON primitive")
      default: bounds.append((name, value))
      }
    }
    for name in ["limitToFirst", "limitToLast"] {
      guard let text = parameters[name] else { continue }
      guard let count = Query.limitCount(text) else {
        throw RESTError(400, "\(name) must be a non-negative integer (got \(text))")
      }
      limits.append((name, count))
    }
    for name in ["startKey", "endKey"] {
      guard let text = parameters[name] else { continue }
      guard case .string(let key)? = try? JSONValue(parsing: text) else {
        throw RESTError(400, "\(name) must be a JSON string, a pk such as \"k1\" (got \(text))")
      }
      // A key names one child: Firebase refuses a key holding a path
      // separator, and no pk holds one.
      if key.isEmpty || key.contains("/") {
        throw RESTError(400, "\(name) must be a key, not a path or an empty string (got \(text))")
      }
      if name == "startKey" { startKey = key } else { endKey = key }
    }
    if startKey != nil && !bounds.contains(where: { ["startAt", "startAfter", "equalTo"].contains($0.name) })
    {
      throw RESTError(400, "startKey needs startAt, startAfter or equalTo")
    }
    if endKey != nil && !bounds.contains(where: { ["endAt", "endBefore", "equalTo"].contains($0.name) }) {
      throw RESTError(400, "endKey needs endAt, endBefore or equalTo")
    }
    filter = parameters["where"]
    // A filter alone reads in key order; Firebase's rule is for its own
    // parameters.
    if orderBy == nil && !(bounds.isEmpty && limits.isEmpty) {
      throw RESTError(400, "orderBy must be defined when other query parameters are defined")
    }
  }

  /// The query on `collection`, or the Folio message of a bad combination.
  /// - Parameter limited: false leaves `limitToFirst` and `limitToLast`
  ///   out, to count every document the range and filter match.
  func query(on collection: DocumentCollection, limited: Bool = true) throws -> Query {
    var query = collection.query()
    switch orderBy {
    case nil: break
    case "$key": query = try query.orderByKey()
    case "$value": query = try query.orderByValue()
    case "$priority":
      throw RESTError(400, "orderBy \"$priority\" is not supported: Folio keeps no priorities")
    case let path?:
      let segments = path.split(separator: "/").map(String.init)
      guard !segments.isEmpty else { throw RESTError(400, "orderBy must be a valid JSON encoded path") }
      query = try query.orderBy(child: FieldPath(segments))
    }
    for (name, value) in bounds {
      switch name {
      case "startAt": query = try query.startAt(value, key: startKey)
      case "startAfter": query = try query.startAfter(value, key: startKey)
      case "endAt": query = try query.endAt(value, key: endKey)
      case "endBefore": query = try query.endBefore(value, key: endKey)
      default: query = try query.equalTo(value, key: startKey ?? endKey)
      }
    }
    if limited {
      for (name, count) in limits {
        query = name == "limitToFirst" ? try query.limitToFirst(count) : try query.limitToLast(count)
      }
    }
    if let filter {
      do {
        query = try query.where(Predicate(parsing: filter, source: "where"))
      } catch let error as FolioError where error.code == .invalidQuery {
        // The page shows the message at its place in the expression.
        var refused = RESTError(400, "\(error.code): \(error.message)")
        refused.body = JSONValue.object([
          "error": .string(refused.message), "column": .integer(error.location?.column ?? 1),
        ])
        throw refused
      }
    }
    return query
  }
}
