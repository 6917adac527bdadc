/// How merges and the watcher read a change to a column.
///
/// A column's kind is set in `folio.yaml` under a table's `columns`. Columns
/// that are not listed are registers.
///
/// ```yaml
/// columns:
///   views: counter   # an edit 3 -> 5 means increment by 2
///   tags: set        # an edit [a] -> [a, b] means arrayUnion [b]
///   title: register  # last writer wins
/// ```
public enum ColumnKind: String, Sendable, Hashable, CaseIterable {
  /// An integer whose edits are increments: concurrent raises add up.
  case counter
  /// An array whose edits are unions and removals: concurrent additions all
  /// survive.
  case set
  /// A plain value: the latest write wins.
  case register
}
