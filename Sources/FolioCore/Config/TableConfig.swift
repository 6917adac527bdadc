import FolioSystem

/// One table of a store: its folder, its key column, its order keys, its
/// secondary indexes and the kinds of its columns.
///
/// ```swift
/// let todos = TableConfig(name: "todos", path: "data/todos", order: ["lastUpdate"],
///                         indexes: ["owner"], columns: ["views": .counter, "tags": .set])
/// todos.kind(of: "views")   // .counter
/// todos.kind(of: "title")   // .register
/// ```
public struct TableConfig: Sendable, Hashable {
  /// The table's name, as used in the API and on the command line.
  public var name: String
  /// The table's folder, relative to the store root, normalised: no leading
  /// or trailing `/`, no `.` segments and no empty segments.
  public var path: String
  /// The column that holds each document's pk, or nil when the pk lives
  /// only in the file name (`key: null` in `folio.yaml`).
  ///
  /// A table with a key column gives every document its pk as a member, so
  /// a document read on its own says which it is. A table without one
  /// stores each value exactly as written, as Firebase keeps a key in the
  /// path and never inside the value: `folio serve` then returns what a
  /// client wrote, byte for byte.
  public var key: String?
  /// The order keys (column names or dotted paths), which get persistent
  /// indexes and are the default sort for export.
  public var order: [String]
  /// More paths to index (column names or dotted paths), for filters: the
  /// query planner reads a range of their index instead of every document.
  /// None of them is an order key.
  public var indexes: [String]
  /// The kinds of the columns that are not registers.
  public var columns: [String: ColumnKind]
  /// The table's columns in the order its files had them (`fields:` in
  /// `folio.yaml`), which `folio import` writes from a CSV/TSV header and
  /// `folio export` uses for CSV/TSV columns. Columns not listed follow,
  /// sorted. Empty when no order is known.
  public var fields: [String] = []

  /// The names the table had before, oldest first (`renamed-from:` in
  /// `folio.yaml`, written by `folio tables rename`): ops recorded under
  /// them, and another replica's files in the folder they named, belong
  /// to this table (see ``Config/renames``).
  public var renamedFrom: [String] = []
  /// The table's JSON Schema file, relative to the store root, normalised
  /// like ``path``; nil when documents are not checked.
  public var schemaFile: String?
  /// The schema read from ``schemaFile``: every document written through
  /// Folio must pass it. Nil when there is none, or when the config was
  /// read from text alone (``Config/init(yaml:file:)`` has no store to
  /// read the file from).
  public var schema: JSONSchema?
  /// Whether ``schemaFile`` names a file that does not exist (a clone of a
  /// store whose schema was never committed). The store still opens and
  /// its documents are read; writes to the table are refused, and `fsck`
  /// and `status` say why, until the file is back.
  public var schemaMissing = false
  /// How the table spreads its document files over its folder
  /// (`layout:` in `folio.yaml`; flat when absent).
  public var layout: TableLayout

  /// Creates a table.
  ///
  /// This does not validate: ``Config/init(yaml:file:)`` does, when it reads
  /// `folio.yaml`.
  ///
  /// - Parameters:
  ///   - name: the table's name.
  ///   - path: the folder relative to the store root; `nil` means the name.
  ///     It is normalised (see ``path``).
  ///   - key: the column that holds the pk; nil keeps the pk in the file
  ///     name only.
  ///   - order: the order keys.
  ///   - indexes: more paths to index, for filters.
  ///   - columns: the kinds of the columns that are not registers.
  ///   - schema: the JSON Schema documents must pass.
  ///   - layout: how document files spread over the folder.
  public init(
    name: String, path: String? = nil, key: String? = "id", order: [String] = [],
    indexes: [String] = [], columns: [String: ColumnKind] = [:], schema: JSONSchema? = nil,
    layout: TableLayout = .default
  ) {
    self.layout = layout
    self.name = name
    self.path = Self.normalizedPath(path ?? name)
    self.key = key
    self.order = order
    self.indexes = indexes
    self.columns = columns
    self.schemaFile = schema?.file
    self.schema = schema
  }

  /// Every path with a persistent index: the order keys, then the
  /// secondary indexes.
  public var indexedPaths: [String] { order + indexes.filter { !order.contains($0) } }

  /// The kind of `column`: its listed kind, or ``ColumnKind/register`` when
  /// it is not listed.
  ///
  /// The key column is always a register: its value is the document's pk
  /// and file name, so it can neither be counted nor merged as a set.
  public func kind(of column: String) -> ColumnKind {
    if let key, column == key { return .register }
    return columns[column] ?? .register
  }

  /// `path` without empty and `.` segments, so that `./data//todos/` and
  /// `data/todos` name the same folder and compare equal. `..` segments are
  /// kept: rejecting them is validation's job, and it needs to see them.
  static func normalizedPath(_ path: String) -> String {
    path.split(separator: "/", omittingEmptySubsequences: true)
      .filter { $0 != "." }
      .map(String.init)
      .concatenated(separator: "/")
  }
}

extension TableConfig {
  /// Why writes to the table are refused while its schema file is missing;
  /// nil when it is not.
  public var missingSchemaError: FolioError? {
    guard schemaMissing, let schemaFile else { return nil }
    return FolioError(
      .invalidConfig,
      "schema file '\(schemaFile)' of table '\(name)' does not exist, so writes to the table are refused until it does: "
        + "commit it where it was made (a commit includes every file \(Config.fileName) names), "
        + "or write one",
      path: schemaFile, table: name, remedy: .inferSchema(table: name))
  }
}
