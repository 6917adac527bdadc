import FolioCore
import FolioJSON
import FolioSystem

extension Store {
  /// The versions of one document, newest first: each commit that gave it
  /// a value none of its parents held, with that value and the changes
  /// from its first parent's.
  ///
  /// The walk covers every commit reachable from HEAD, so it follows the
  /// document into each side of a merge; a replay merge that produced a
  /// value neither side had is a version of its own. A merge that took one
  /// side's value is not. Edits not yet committed are not included.
  ///
  /// ```swift
  /// for version in try store.history(table: "todos", pk: "t1") {
  ///   print(version.commit.id.prefix(8), version.commit.author, version.document?.value ?? "removed")
  /// }
  /// ```
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_JSON` naming `commit:path` for a
  ///   version that is not a JSON object.
  public func history(table name: String, pk: String) throws -> [DocumentVersion] {
    let table = try table(named: name)
    let repository = try openRepository()
    guard let head = try repository.headCommit()?.id else { return [] }
    let path = (try table.path(of: pk))
    let walk = try PathHistory(repository: repository, head: head, paths: [path])
    let reader = TreeMerge(repository: repository, config: config)
    var parsed: [GitOID: JSONObject] = [:]
    func value(at step: Int) throws -> JSONObject? {
      guard let blob = try walk.blob(step, 0) else { return nil }
      if let known = parsed[blob] { return known }
      let object = try reader.document(
        blob, path: walk.steps[step].commit.description.prefix(12) + ":" + path)
      parsed[blob] = object
      return object
    }
    var versions: [DocumentVersion] = []
    for at in try walk.versions(of: 0).reversed() {
      let step = walk.steps[at]
      let new = try value(at: at)
      let old = try step.parents.first.flatMap { try value(at: $0) }
      versions.append(
        DocumentVersion(
          commit: try repository.commit(step.commit).info,
          document: new.map { Document(pk: pk, table: table.name, value: $0) },
          changes: DocumentChange.changes(table: table, pk: pk, old: old, new: new)))
    }
    return versions
  }
}
