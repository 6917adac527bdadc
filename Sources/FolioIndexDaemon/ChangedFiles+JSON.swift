import FolioJSON
import FolioQuery

extension ChangedFiles {
  /// The answer as a publisher sends it:
  /// `{"token": …, "changed": {table: [name, …]}}`.
  var json: JSONValue {
    let tables = changed.keys.sorted().map { ($0, JSONValue.array(changed[$0]!.map { .string($0) })) }
    return ["token": .string(token), "changed": .object(JSONObject(tables))]
  }

  /// An answer read from a publisher; nil for anything malformed.
  init?(json: JSONValue) {
    guard let token = json["token"]?.stringValue, case .object(let tables)? = json["changed"] else {
      return nil
    }
    var changed: [String: [String]] = [:]
    for (table, value) in tables {
      guard let names = value.arrayValue?.compactMap(\.stringValue) else { return nil }
      changed[table] = names
    }
    self.init(token: token, changed: changed)
  }
}
