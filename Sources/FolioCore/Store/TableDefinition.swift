import Foundation

/// One table for ``Store/create(at:tables:mergeDriver:)``: a ``TableConfig``
/// without its name, which is the dictionary key.
///
/// ```swift
/// let todos: TableDefinition = .init(path: "data/todos", order: ["lastUpdate"])
/// ```
public struct TableDefinition: Sendable, Hashable {
  /// The folder relative to the store root; nil means the table's name.
  public var path: String?
  /// The column that holds the pk; nil keeps the pk in the file name only
  /// (see ``TableConfig/key``).
  public var key: String?
  /// The order keys (indexed; the default sort).
  public var order: [String]
  /// More paths to index, for filters.
  public var indexes: [String]
  /// The kinds of the columns that are not registers.
  public var columns: [String: ColumnKind]

  /// Creates a definition; see ``TableConfig/init(name:path:key:order:indexes:columns:schema:layout:)``.
  public init(
    path: String? = nil, key: String? = "id", order: [String] = [], indexes: [String] = [],
    columns: [String: ColumnKind] = [:]
  ) {
    self.path = path
    self.key = key
    self.order = order
    self.indexes = indexes
    self.columns = columns
  }

  /// The table config named `name`.
  public func table(named name: String) -> TableConfig {
    TableConfig(name: name, path: path, key: key, order: order, indexes: indexes, columns: columns)
  }
}
