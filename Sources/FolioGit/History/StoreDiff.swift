import FolioCore
import FolioSystem

/// What ``Store/diff(from:to:tables:)`` found: the changes, by table,
/// document and path, and the files it could not read.
public struct StoreDiff: Sendable {
  /// The changes, by table (in `folio.yaml` order), then pk, then path.
  public var changes: [DocumentChange]
  /// Working-tree documents that could not be read (invalid JSON, a link),
  /// left out of ``changes``.
  public var problems: [FolioError]

  /// Counts for one table, as `folio diff --stat` prints them.
  public struct TableStat: Sendable, Equatable {
    /// The table.
    public var table: String
    /// Documents added.
    public var added: Int
    /// Documents removed.
    public var removed: Int
    /// Documents changed.
    public var changed: Int
    /// Paths changed inside the changed documents.
    public var paths: Int
  }

  /// The counts per table with at least one change.
  public var stats: [TableStat] {
    var order: [String] = []
    var byTable: [String: TableStat] = [:]
    var lastDocument: (String, String)?
    for change in changes {
      if byTable[change.table] == nil {
        order.append(change.table)
        byTable[change.table] = TableStat(table: change.table, added: 0, removed: 0, changed: 0, paths: 0)
      }
      switch (change.path.isEmpty, change.change) {
      case (true, .added): byTable[change.table]!.added += 1
      case (true, .removed): byTable[change.table]!.removed += 1
      default:
        byTable[change.table]!.paths += 1
        if lastDocument.map({ $0 != (change.table, change.pk) }) ?? true {
          byTable[change.table]!.changed += 1
        }
      }
      lastDocument = (change.table, change.pk)
    }
    return order.map { byTable[$0]! }
  }
}
