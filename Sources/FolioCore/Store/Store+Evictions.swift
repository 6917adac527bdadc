import FolioJSON
import FolioSystem

extension Store {
  /// The evicted documents' pks, by table: removed locally, not deleted.
  /// Kept in `.git/folio/evicted.json`. Pks compare by their bytes, so
  /// evicting one of two twin pks leaves the other alone.
  package func loadEvictions() throws -> [String: Set<ExactKey>] {
    guard let bytes = try FileSystem.read(evictedPath), !bytes.isEmpty else { return [:] }
    let value = try JSONValue(parsing: bytes, file: relative(evictedPath))
    var result: [String: Set<ExactKey>] = [:]
    for (table, pks) in value.objectValue ?? [:] {
      result[table] = Set((pks.arrayValue ?? []).compactMap { $0.stringValue.map { ExactKey($0) } })
    }
    return result
  }

  package func saveEvictions(_ evictions: [String: Set<ExactKey>]) throws {
    var object = JSONObject()
    for table in evictions.keys.sorted() {
      object[table] = .array(evictions[table]!.sorted().map { .string($0.string) })
    }
    try FileSystem.writeAtomically(evictedPath, JSONValue.object(object).canonicalBytes(), sync: true)
  }

  /// Whether `pk` in `table` was evicted (and not written since).
  public func isEvicted(table: String, pk: String) throws -> Bool {
    try loadEvictions()[table]?.contains(ExactKey(pk)) ?? false
  }
}
