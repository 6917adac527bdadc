import FolioCore
import FolioJSON
import FolioSystem

extension WorkTreeScan {
  /// The file that remembers, per table, which committed documents break
  /// its schema: rebuildable from the commit and the schema.
  var schemaStatusPath: String { store.privateDirectory + "/schema-status.json" }

  /// Every way the documents break their tables' schemas now, for
  /// `folio status`: merges are never blocked by a schema, so a merged
  /// document may break it, and so may a file edited outside Folio.
  ///
  /// Documents that differ from HEAD are checked as they are on disk (the
  /// scan has read them). Committed ones are checked once per table tree:
  /// `.git/folio/schema-status.json` keeps, for each table, the tree id of
  /// its folder and schema it checked and the documents that failed; a new
  /// commit costs a tree diff and a check of the documents it changed, so
  /// a status stays cheap in a large table.
  /// - Returns: one error per violation, placed in the document's text.
  func schemaViolations(scan: PendingScan, headTree: GitTree?, repository: GitRepository) throws
    -> [FolioError]
  {
    let tables = store.config.tables.filter { $0.schema != nil }
    guard !tables.isEmpty else { return [] }
    let before = (try? FileSystem.read(schemaStatusPath)).flatMap { $0 }.flatMap {
      try? JSONValue(parsing: $0)
    }
    var cache = before?.objectValue ?? JSONObject()
    var problems: [FolioError] = []
    for table in tables {
      let schema = table.schema!
      let fingerprint = FNV.hex(schema.source) + ":" + schema.file
      let folder = try headTree?.subtree(at: table.path, repository: repository)
      var invalid: [String: GitOID] = [:]
      /// Whether the blob, a document of this table, breaks the schema.
      func breaks(_ id: GitOID) throws -> Bool {
        guard case .object(let object)? = try? JSONValue(parsing: try repository.blob(id)) else {
          return false
        }
        return !schema.accepts(.object(object))
      }
      if let folder {
        let entry = cache[table.name]?.objectValue
        let oldTree = entry?["tree"]?.stringValue.flatMap(GitOID.init(hex:))
        if entry?["schema"]?.stringValue == fingerprint, let oldTree,
          let old = try? repository.tree(oldTree)
        {
          for (name, id) in entry?["invalid"]?.objectValue ?? [:] {
            if let id = id.stringValue.flatMap(GitOID.init(hex:)) { invalid[name] = id }
          }
          if oldTree != folder.id {
            for change in try repository.changes(from: old, to: folder) {
              invalid[change.path] = nil
              if let id = change.new, table.pk(fromDocumentName: change.path) != nil, try breaks(id) {
                invalid[change.path] = id
              }
            }
          }
        } else {
          for (name, id) in try folder.documentBlobs(in: "", layout: table.layout, repository: repository)
          where table.pk(fromDocumentName: name) != nil {
            if try breaks(id) { invalid[name] = id }
          }
        }
      }
      var record: JSONObject = ["schema": .string(fingerprint)]
      if let folder { record["tree"] = .string(folder.id.description) }
      var listed = JSONObject()
      for (name, id) in invalid { listed[name] = .string(id.description) }
      record["invalid"] = .object(listed)
      cache[table.name] = .object(record)

      // What is on disk now wins over what is committed.
      var pending = Set<String>()
      for document in scan.documents where document.table.name == table.name {
        pending.insert(document.path)
        guard let bytes = document.bytes, let object = document.document else { continue }
        problems += store.config.schemaProblems(object, bytes: bytes, table: table, path: document.path)
      }
      for (name, id) in invalid.sorted(by: { $0.key < $1.key })
      where !pending.contains(table.path + "/" + name) {
        let bytes = try repository.blob(id)
        guard case .object(let object)? = try? JSONValue(parsing: bytes) else { continue }
        problems += store.config.schemaProblems(
          object, bytes: bytes, table: table, path: table.path + "/" + name)
      }
    }
    if before != .object(cache) {
      // Only a cache: a failure to keep it costs the next status a full check.
      try? FileSystem.writeAtomically(schemaStatusPath, JSONValue.object(cache).canonicalBytes(), sync: false)
    }
    return problems
  }
}
