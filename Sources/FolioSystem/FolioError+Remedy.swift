extension FolioError {
  /// A next step that fixes an error, named so that each front end can
  /// word it: ``advice`` says it with the library's API, and the `folio`
  /// tool says it as a command line.
  public enum Remedy: Hashable, Sendable {
    /// Create a store where there is none.
    case createStore
    /// Sync again, once the cause is dealt with.
    case syncAgain
    /// Commit again, once the cause is dealt with.
    case commitAgain
    /// Complete an interrupted write, once its cause is fixed.
    case completePendingWrite
    /// Add the named table to `folio.yaml`.
    case addTable(String)
    /// Remove the named table from `folio.yaml`.
    case removeTable(String)
    /// Propose a schema for the named table from its documents.
    case inferSchema(table: String)
    /// Remove a document of the named table.
    case removeDocument(table: String)
    /// See which files a commit left out, and why.
    case showLeftOutFiles
    /// Fetch a table a partial replica does not hold.
    case subscribeTable(String)

    /// The step as a line of text in the library's terms.
    ///
    /// ```
    /// To add it: store.addTable(TableConfig(name: "todo", path: "data/todo"))
    /// ```
    public var advice: String {
      switch self {
      case .createStore: "To create one: Store.create(at:)"
      case .syncAgain: "To sync again: store.sync()"
      case .commitAgain: "To commit again: store.commit()"
      case .completePendingWrite: "To complete it now: open the store again, or write"
      case .addTable(let name):
        "To add it: store.addTable(TableConfig(name: \(literal(name)), path: \(literal("data/" + name))))"
      case .removeTable(let name): "To remove it: store.removeTable(named: \(literal(name)))"
      case .inferSchema(let table): "To propose one: store.inferSchema(table: \(literal(table)))"
      case .removeDocument(let table):
        "To remove it: store.collection(\(literal(table))).findByID(pk).remove()"
      case .showLeftOutFiles: "To see why files were left out: store.status()"
      case .subscribeTable(let name): "To fetch it: store.subscribe(table: \(literal(name)))"
      }
    }

    private func literal(_ text: String) -> String { text.debugDescription }
  }
}
