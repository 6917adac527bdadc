import FolioCore
import FolioJSON
import FolioQuery

extension RESTQuery {
  /// The query applied to the children of `value`, a value inside a
  /// document, as Firebase queries any location: its members (or an
  /// array's elements, keyed by index) ordered by key, value or child path,
  /// with Firebase's comparator and ties by key, then ranged and limited.
  ///
  /// Tables are queried through ``query(on:)``, with their indexes; a value
  /// inside a document is at most one document's size, so it is sorted in
  /// memory. A value with no children (a string, a number) is returned as
  /// it is. `collection` checks the parameters as a table query would, so
  /// both refuse the same mistakes with the same words.
  func select(from value: JSONValue, checkingWith collection: DocumentCollection) throws -> JSONValue {
    if filter != nil { throw RESTError(400, "where filters a table's documents, as in /todos.json?where=…") }
    _ = try query(on: collection)
    var children: [(key: String, value: JSONValue)]
    switch value {
    case .object(let object): children = object.map { ($0.key, $0.value) }
    case .array(let elements): children = elements.enumerated().map { (String($0.offset), $0.element) }
    default: return value
    }
    let path = orderBy.flatMap {
      $0.hasPrefix("$") ? nil : FieldPath($0.split(separator: "/").map(String.init))
    }
    func sortValue(_ child: (key: String, value: JSONValue)) -> JSONValue? {
      if orderBy == "$value" { return child.value }
      guard let path else { return nil }
      switch child.value {
      case .object(let object): return object.childValue(at: path)
      // Stepped into as a document's member would be, indexes included.
      case .array: return JSONObject([("_", child.value)]).childValue(at: FieldPath(["_"] + path.segments))
      default: return nil
      }
    }
    func compare(_ child: (key: String, value: JSONValue), _ bound: JSONValue) -> Int {
      if orderBy == "$key" {
        guard case .string(let key) = bound else { return 0 }
        return ValueOrdering.comparePKs(child.key, key)
      }
      return ValueOrdering.compare(sortValue(child), bound)
    }
    let keyed = children.map { (child: $0, order: orderBy == "$key" ? nil : sortValue($0)) }
    var ordered = keyed.sorted { a, b in
      let byValue = ValueOrdering.compare(a.order, b.order)
      return byValue != 0 ? byValue < 0 : ValueOrdering.comparePKs(a.child.key, b.child.key) < 0
    }.map(\.child)
    for (name, bound) in bounds {
      ordered = ordered.filter { child in
        let c = compare(child, bound)
        switch name {
        case "startAt": return c >= 0
        case "startAfter": return c > 0
        case "endAt": return c <= 0
        case "endBefore": return c < 0
        default: return c == 0
        }
      }
    }
    for (name, count) in limits {
      ordered = name == "limitToFirst" ? Array(ordered.prefix(count)) : Array(ordered.suffix(count))
    }
    return FirebaseArrays.shaped(.object(JSONObject(ordered.map { ($0.key, $0.value) })))
  }
}
