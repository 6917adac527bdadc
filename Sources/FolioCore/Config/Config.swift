/// A store's configuration: the tables it holds, as read from `folio.yaml`.
///
/// ```swift
/// let config = try Config(contentsOf: storeRoot.appending(path: Config.fileName))
/// if let todos = config.table(named: "todos") {
///     print(todos.path, todos.order)
/// }
/// ```
///
/// The file looks like this:
///
/// ```yaml
/// version: 1
/// tables:
///   todos:
///     path: data/todos        # folder, relative to the store root (default: the table name)
///     key: id                 # column that holds the pk (default: id)
///     order: [lastUpdate]     # order keys (column names or dotted paths), default []
///     indexes: [owner]        # more indexed paths, for filters (default [])
///     columns:                # optional column kinds
///       views: counter
///       tags: set
///       title: register
/// sync:                       # optional, see ``SyncConfig``
///   remote: origin
///   pull-every: 30s
/// index:                      # optional, see ``IndexConfig``
///   daemon: auto
///   idle: 30m
/// serve:                      # optional, see ``ServeConfig``
///   cors: [https://app.example.com]
/// limits:                     # optional, see ``LimitsConfig``
///   document: 16M
/// ```
public struct Config: Sendable, Hashable {
  /// The name of the config file at the root of every store.
  public static let fileName = "folio.yaml"

  /// The schema version. Version 1 is the only one.
  public var version: Int
  /// The tables, in the order the file lists them.
  public var tables: [TableConfig]
  /// How the store pulls on its own while subscriptions are alive.
  public var sync: SyncConfig
  /// Whether queries start an index daemon on demand, and its idle timeout.
  public var index: IndexConfig
  /// Which browser origins and host names `folio serve` lets in.
  public var serve: ServeConfig
  /// How large a document may be.
  public var limits: LimitsConfig

  /// Creates a config from its parts, without validating them.
  public init(
    version: Int = 1, tables: [TableConfig] = [], sync: SyncConfig = SyncConfig(),
    index: IndexConfig = IndexConfig(), serve: ServeConfig = ServeConfig(),
    limits: LimitsConfig = LimitsConfig()
  ) {
    self.version = version
    self.tables = tables
    self.sync = sync
    self.index = index
    self.serve = serve
    self.limits = limits
  }

  /// The table called `name`, if the config defines one.
  public func table(named name: String) -> TableConfig? {
    tables.first { $0.name == name }
  }
}
