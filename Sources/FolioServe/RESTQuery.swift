import FolioCore
import FolioJSON
import FolioQuery

/// Firebase's query parameters (`orderBy`, `startAt`, …, `limitToLast`),
/// JSON-encoded as its clients send them, turned into a Folio ``Query`` so
/// that the query engine and its indexes do the work.
struct RESTQuery: Sendable {
  private(set) var orderBy: String?
  private(set) var bounds: [(name: String, value: JSONValue)] = []
  private(set) var limits: [(name: String, count: Int)] = []

  static let parameterNames = [
    "orderBy", "startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast",
  ]

  /// Whether any query parameter was given.
  var isEmpty: Bool { orderBy == nil && bounds.isEmpty && limits.isEmpty }

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
    if orderBy == nil && !isEmpty {
      throw RESTError(400, "orderBy must be defined when other query parameters are defined")
    }
  }

  /// The query on `collection`, or the Folio message of a bad combination.
  func query(on collection: DocumentCollection) throws -> Query {
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
      case "startAt": query = try query.startAt(value)
      case "startAfter": query = try query.startAfter(value)
      case "endAt": query = try query.endAt(value)
      case "endBefore": query = try query.endBefore(value)
      default: query = try query.equalTo(value)
      }
    }
    for (name, count) in limits {
      query = name == "limitToFirst" ? try query.limitToFirst(count) : try query.limitToLast(count)
    }
    return query
  }
}
