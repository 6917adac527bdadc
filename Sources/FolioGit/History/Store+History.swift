import FolioCore
import FolioSystem

/// The store's past, read by ``HistoryReader``.
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
    try HistoryReader(store: self).history(table: name, pk: pk)
  }

  /// The store as the commit `revision` left it, read from git's objects
  /// without a checkout (see ``StoreSnapshot``).
  ///
  /// `revision` is anything `git rev-parse` takes (an id, a branch or tag,
  /// `HEAD~3`) or a date (`2026-11-30`, `2 days ago`), meaning the last
  /// commit on the branch's first-parent line before it.
  /// - Throws: `NOT_FOUND` when `revision` names no commit.
  public func snapshot(asOf revision: String) throws -> StoreSnapshot {
    try HistoryReader(store: self).snapshot(asOf: revision)
  }

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
    try HistoryReader(store: self).diff(from: from, to: to, tables: tables)
  }

  /// For each leaf of a document, the operation that last set it (its
  /// kind, stamp and replica) and the commit that brought that operation,
  /// with its author and date.
  ///
  /// Blame follows the op logs, not the text of commits: the document's
  /// ops from every replica's log are replayed in stamp order, as a merge
  /// replays them, so a value a replay merge produced is blamed on the op
  /// and replica that wrote it, not on the merge. A counter lists the
  /// increments since its last assignment, and a set who added each
  /// member. A value no op explains (edited and committed without Folio,
  /// or its ops compacted away) is blamed on the commit that made it, as
  /// ``BlameSource/Kind/edit``.
  ///
  /// The document is read as the working tree holds it, and ops not yet
  /// committed have no commit.
  ///
  /// ```swift
  /// for field in try store.blame(table: "todos", pk: "t1").fields {
  ///   print(field.path, field.source.kind, field.source.replica ?? "-", field.source.commit?.author ?? "-")
  /// }
  /// ```
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_JSON` at `file:line:col` for an
  ///   unreadable document or op log line.
  public func blame(table name: String, pk: String) throws -> DocumentBlame {
    try HistoryReader(store: self).blame(table: name, pk: pk)
  }
}
