import Foundation

extension Store {
  /// Makes `url` a store with `tables`, or opens the store already there
  /// and adds those of `tables` it does not define yet (a table it already
  /// has is left as configured); safe to run twice. So a new program can
  /// write at once, with no `folio.yaml` written by hand.
  ///
  /// ```swift
  /// let store = try Store.create(
  ///     at: URL(fileURLWithPath: "todo-data"),
  ///     tables: ["todos": .init(path: "data/todos", order: ["lastUpdate"], columns: ["views": .counter])])
  /// try store.collection("todos").upsert(["id": "a", "title": "Buy milk"])
  /// ```
  /// - Parameters:
  ///   - tables: per table name, its folder, key, order keys and column
  ///     kinds (see ``TableDefinition``).
  ///   - mergeDriver: as for ``create(at:config:mergeDriver:)``.
  /// - Returns: the store, opened on its config with every table in it.
  /// - Throws: `INVALID_CONFIG` for a bad table name or folder, or one
  ///   whose folder another table has.
  @discardableResult
  public static func create(at url: URL, tables: [String: TableDefinition], mergeDriver: String = "folio")
    throws -> Store
  {
    var store = try create(at: url, config: nil, mergeDriver: mergeDriver)
    for name in tables.keys.sorted() where store.config.table(named: name) == nil {
      store = try store.addTable(tables[name]!.table(named: name)).store
    }
    return store
  }
}

/// One table for ``Store/create(at:tables:mergeDriver:)``: a ``TableConfig``
/// without its name, which is the dictionary key.
///
/// ```swift
/// let todos: TableDefinition = .init(path: "data/todos", order: ["lastUpdate"])
/// ```
public struct TableDefinition: Sendable, Hashable {
  /// The folder relative to the store root; nil means the table's name.
  public var path: String?
  /// The column that holds the pk.
  public var key: String
  /// The order keys (indexed; the default sort).
  public var order: [String]
  /// More paths to index, for filters.
  public var indexes: [String]
  /// The kinds of the columns that are not registers.
  public var columns: [String: ColumnKind]

  /// Creates a definition; see ``TableConfig/init(name:path:key:order:indexes:columns:)``.
  public init(
    path: String? = nil, key: String = "id", order: [String] = [], indexes: [String] = [],
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
