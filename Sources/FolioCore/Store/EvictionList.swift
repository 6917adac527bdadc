import FolioJSON
import FolioSystem

/// The evicted documents' pks, by table: removed locally, not deleted.
/// Kept in `.git/folio/evicted.json`. Pks compare by their bytes, so
/// evicting one of two twin pks leaves the other alone.
package struct EvictionList {
  /// The store whose list this is.
  let store: Store

  /// Where the list is kept.
  var path: String { store.privateDirectory + "/evicted.json" }

  /// The list, by table.
  package func load() throws -> [String: Set<ExactKey>] {
    guard let bytes = try FileSystem.read(path), !bytes.isEmpty else { return [:] }
    let value = try JSONValue(parsing: bytes, file: store.relative(path))
    var result: [String: Set<ExactKey>] = [:]
    for (table, pks) in value.objectValue ?? [:] {
      result[table] = Set((pks.arrayValue ?? []).compactMap { $0.stringValue.map { ExactKey($0) } })
    }
    return result
  }

  /// Replaces the list, durably.
  package func save(_ evictions: [String: Set<ExactKey>]) throws {
    var object = JSONObject()
    for table in evictions.keys.sorted() {
      object[table] = .array(evictions[table]!.sorted().map { .string($0.string) })
    }
    try FileSystem.writeAtomically(path, JSONValue.object(object).canonicalBytes(), sync: true)
  }

  /// The relative paths of evicted documents.
  package func paths() throws -> Set<String> {
    var paths = Set<String>()
    for (name, pks) in try load() {
      guard let table = store.config.table(named: name) else { continue }
      for pk in pks { paths.insert((try table.path(of: pk.string))) }
    }
    return paths
  }
}
