import FolioCore
import FolioJSON
import FolioSystem

extension Store {
  /// The changes between two versions of the store, by table, document and
  /// JSON path, never by line.
  ///
  /// - With both revisions, `from` against `to`.
  /// - With `to` nil, `from` against the working tree, including edits not
  ///   yet committed or recorded (made in an editor with no watcher).
  /// - With neither, HEAD against the working tree.
  ///
  /// Only what changed is read: git's tree diff of each table's folder
  /// names the documents, and the working tree is compared through the
  /// index's stat data, as `folio status` does.
  ///
  /// ```swift
  /// for change in try store.diff(from: "HEAD~1", to: "HEAD").changes {
  ///   print(change.pk, change.path, change.old ?? "-", change.new ?? "-")
  /// }
  /// ```
  /// - Parameter tables: the tables to compare; all those this replica
  ///   holds when empty (see ``absentTables``).
  /// - Throws: `NOT_FOUND` for a revision that names no commit;
  ///   `UNKNOWN_TABLE`.
  public func diff(from: String? = nil, to: String? = nil, tables: [String] = []) throws -> StoreDiff {
    let repository = try openRepository()
    let selected = tables.isEmpty ? heldTables : try tables.map { try table(named: $0) }
    let head = try repository.headCommit()
    let oldTree =
      from == nil ? try head?.tree() : try repository.commit(try repository.resolveCommit(from!)).tree()
    let newTree =
      to == nil ? try head?.tree() : try repository.commit(try repository.resolveCommit(to!)).tree()
    // The working tree's documents that differ from HEAD: nil for deleted.
    var pending: [String: [String: JSONObject?]] = [:]
    var problems: [FolioError] = []
    if to == nil {
      let scan = try lock.withLock {
        recoverForReading()
        return try scanPending(repository: repository, headTree: newTree, index: try repository.index())
      }
      for document in scan.documents {
        pending[document.table.name, default: [:]][document.pk] = document.document
      }
      problems = scan.problems
    }
    let reader = TreeMerge(repository: repository, config: config)
    var changes: [DocumentChange] = []
    for table in selected {
      let oldFolder = try oldTree?.subtree(at: table.path, repository: repository)
      let newFolder = try newTree?.subtree(at: table.path, repository: repository)
      // pk → blob ids on each side, for the documents git's diff names.
      var ids: [String: (old: GitOID?, new: GitOID?)] = [:]
      if let newFolder {
        for change in try repository.changes(from: oldFolder, to: newFolder) {
          guard let pk = table.pk(fromDocumentName: change.path) else { continue }
          ids[pk] = (change.old, change.new)
        }
      } else if let oldFolder {
        for (name, id) in try oldFolder.documentBlobs(in: "", layout: table.layout, repository: repository) {
          guard let pk = table.pk(fromDocumentName: name) else { continue }
          ids[pk] = (id, nil)
        }
      }
      let edited = pending[table.name] ?? [:]
      for pk in edited.keys where ids[pk] == nil {
        let name = try table.documentName(for: pk)
        ids[pk] = (oldFolder?.blobID(at: name), nil)
      }
      for pk in ids.keys.sorted() {
        let (oldID, newID) = ids[pk]!
        let path = (try table.path(of: pk))
        let old = try reader.document(oldID, path: path)
        let new: JSONObject? = try edited[pk] ?? reader.document(newID, path: path)
        changes += DocumentChange.changes(table: table, pk: pk, old: old, new: new)
      }
    }
    return StoreDiff(changes: changes, problems: problems)
  }
}
