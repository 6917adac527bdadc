import FolioCore
import FolioGit
import Foundation

/// The ways to open or make a store. They live in the composition root,
/// since a store is opened with every layer wired in
/// (``StoreWiring/layers``).
extension Store {
  /// Opens the store that holds `url`: the nearest directory at or above it
  /// with a `folio.yaml`.
  ///
  /// Finishes any write that a crash interrupted before it returns.
  /// - Throws: `STORE_NOT_FOUND` if there is none; `INVALID_CONFIG` with
  ///   `folio.yaml:line:col` if the config is bad; `GIT` if the root is not a
  ///   git working tree.
  public convenience init(at url: URL) throws {
    try self.init(at: url, wiring: .layers)
  }

  /// Opens the store that holds the folder at `path` (relative to the
  /// working directory unless absolute), as ``init(at:)`` does.
  ///
  /// ```swift
  /// let store = try Store(atPath: "todo-data")
  /// ```
  /// - Throws: as ``init(at:)``.
  public convenience init(atPath path: String) throws {
    try self.init(path: path, wiring: .layers)
  }

  /// Makes `url` a store, or opens the store already there; safe to run twice.
  ///
  /// Creates the git repository if there is none, a minimal `folio.yaml`
  /// (or `config` if given and there is no `folio.yaml` yet), `.gitattributes`
  /// routing table files to Folio's merge driver, `.folio/ops/`, and the
  /// replica id.
  /// - Parameters:
  ///   - url: the folder; it is created if it does not exist.
  ///   - config: the `folio.yaml` to write when there is none yet.
  ///   - mergeDriver: the `folio` program git should run as the merge
  ///     driver (registered in `.git/config` as `merge.folio.driver`).
  @discardableResult
  public static func create(at url: URL, config: Config? = nil, mergeDriver: String = "folio") throws -> Store
  {
    try StoreSetup.create(at: url, config: config, mergeDriver: mergeDriver, wiring: .layers)
  }

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
  ///   - url: the folder; it is created if it does not exist.
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
    var store = try StoreSetup.create(at: url, config: nil, mergeDriver: mergeDriver, wiring: .layers)
    for name in tables.keys.sorted() where store.config.table(named: name) == nil {
      store = try store.addTable(tables[name]!.table(named: name)).store
    }
    return store
  }

  /// Clones a store from `url` into `directory` and sets it up as
  /// ``create(at:config:mergeDriver:)`` does, so a new teammate is ready in
  /// one step.
  ///
  /// The clone is built in a hidden folder beside `directory`
  /// (`.NAME.folio-clone-PID`) and renamed into place once it is whole, so
  /// a clone that fails or is killed leaves no `directory` behind and a
  /// plain rerun starts afresh; the next clone beside it removes what a
  /// killed one left. A rerun that finds `directory` already a finished
  /// clone of `url` (the first was killed just as it finished) opens it.
  ///
  /// With `tables`, the clone is a partial replica that holds only those
  /// tables: git fetches the commits and trees but no blob (a partial
  /// clone), Folio fetches the held tables' blobs and checks out only
  /// their folders, and git's sparse checkout is set to match. The others
  /// stay on the remote, listed in ``absentTables``; a sync fetches only
  /// what the held tables need and never records a change to the others.
  /// The remote's git server must filter (`uploadpack.allowFilter`).
  /// - Parameters:
  ///   - url: any URL the system git clones from.
  ///   - directory: where the store goes; it must not exist, or be empty.
  ///   - mergeDriver: the `folio` command git's merge driver runs.
  ///   - tables: the tables to hold; nil for all of them.
  /// - Throws: `REMOTE` if the clone fails, or if `tables` is given and the
  ///   server cannot filter; `UNKNOWN_TABLE` for a name the remote's
  ///   `folio.yaml` does not define; `STORE_NOT_FOUND` if the repository
  ///   has no `folio.yaml`.
  public static func clone(
    url: String, into directory: URL, mergeDriver: String = "folio", tables: [String]? = nil
  ) throws -> Store {
    try clone(url: url, into: directory, mergeDriver: mergeDriver, tables: tables, wiring: .layers)
  }

  /// The post-merge hook's first step after a plain `git pull`: when the
  /// pull brought a `folio.yaml` that does not load (a table folder in
  /// `.git`, outside the store or inside another's; YAML that does not
  /// parse), every command, this hook's included, would fail on the store.
  /// So the old `folio.yaml` is put back and the branch moved back to
  /// `ORIG_HEAD` with Folio's checkout, as for a pull past the clock bound.
  ///
  /// Does nothing when the store's `folio.yaml` loads, or when there is no
  /// `ORIG_HEAD` whose `folio.yaml` loads to go back to.
  /// - Throws: `INVALID_CONFIG` at `folio.yaml:LINE:COL`, saying whether
  ///   the pull was undone.
  public static func undoPullBringingBadConfig(at directory: URL) throws {
    try undoPullBringingBadConfig(at: directory, wiring: .layers)
  }
}
