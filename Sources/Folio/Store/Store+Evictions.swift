extension Store {
  /// The evicted documents, by table: removed locally, not deleted.
  /// Kept in `.git/folio/evicted.json`.
  func loadEvictions() throws -> [String: Set<String>] {
    guard let bytes = try FileSystem.read(evictedPath), !bytes.isEmpty else { return [:] }
    let value = try JSONValue(parsing: bytes, file: relative(evictedPath))
    var result: [String: Set<String>] = [:]
    for (table, pks) in value.objectValue ?? [:] {
      result[table] = Set((pks.arrayValue ?? []).compactMap(\.stringValue))
    }
    return result
  }

  func saveEvictions(_ evictions: [String: Set<String>]) throws {
    var object = JSONObject()
    for table in evictions.keys.sorted() {
      object[table] = .array(evictions[table]!.sorted().map(JSONValue.string))
    }
    try FileSystem.writeAtomically(evictedPath, JSONValue.object(object).canonicalBytes(), sync: true)
  }

  /// Whether `pk` in `table` was evicted (and not written since).
  public func isEvicted(table: String, pk: String) throws -> Bool {
    try loadEvictions()[table]?.contains(pk) ?? false
  }
}
