import FolioJSON
import FolioSystem
import Glibc
import Synchronization

extension Store {
  /// Adds `table` to `folio.yaml`, keeping the file's comments and layout
  /// (see ``ConfigEditor``), creates its folder and routes it to the merge
  /// driver in `.gitattributes`.
  ///
  /// ```swift
  /// let (store, entry) = try store.addTable(TableConfig(name: "people", path: "data/people"))
  /// ```
  /// - Returns: the store opened again on the new config (this one keeps
  ///   the config it was opened with), and the YAML lines added.
  /// - Throws: `INVALID_CONFIG` for a bad table, or at `folio.yaml:L:C` for
  ///   a name or folder another table has; nothing is written then.
  public func addTable(_ table: TableConfig) throws -> (store: Store, entry: String) {
    let entry: String = try lock.withLock {
      let (text, entry) = try ConfigEditor(text: try configText()).adding(table)
      try FileSystem.makeDirectories(rootPath + "/" + table.path)
      try FileSystem.writeAtomically(rootPath + "/" + Config.fileName, Array(text.utf8), sync: true)
      return entry
    }
    let reopened = try Store(rootPath: rootPath, wiring: wiring)
    try reopened.lock.withLock { try reopened.writeGitAttributes() }
    return (reopened, entry)
  }

  /// Adds `table` as ``addTable(_:)`` does and runs `body` with the store
  /// opened on the new config and the YAML lines added. If `body` throws,
  /// `folio.yaml` and `.gitattributes` are put back byte for byte and the
  /// folders made for the table are removed while still empty: a failed
  /// `folio import --create` changes nothing.
  ///
  /// ```swift
  /// let summary = try store.withTableAdded(TableConfig(name: "people", path: "data/people")) { store, _ in
  ///   try store.importRows(into: "people", options: options)
  /// }
  /// ```
  public func withTableAdded<T>(_ table: TableConfig, _ body: (Store, String) throws -> T) throws -> T {
    let configPath = rootPath + "/" + Config.fileName
    let attributesPath = rootPath + "/.gitattributes"
    let savedConfig = try FileSystem.read(configPath)
    let savedAttributes = try FileSystem.read(attributesPath)
    var missing: [String] = []
    var folder = rootPath
    for part in table.path.split(separator: "/") {
      folder += "/" + part
      var status = stat()
      if lstat(folder, &status) != 0 { missing.append(folder) }
    }
    let (store, entry) = try addTable(table)
    do {
      return try body(store, entry)
    } catch {
      try? lock.withLock {
        if let savedConfig { try FileSystem.writeAtomically(configPath, savedConfig, sync: true) }
        if let savedAttributes {
          try FileSystem.writeAtomically(attributesPath, savedAttributes, sync: true)
        } else {
          unlink(attributesPath)
        }
        // rmdir removes only an empty folder: anything written there stays.
        for made in missing.reversed() { rmdir(made) }
      }
      throw error
    }
  }

  /// Removes table `name` from `folio.yaml`. Its folder and documents stay
  /// where they are, committed or not: only the entry goes.
  /// - Returns: the store opened again on the new config.
  /// - Throws: `UNKNOWN_TABLE` when there is no such table.
  public func removeTable(named name: String) throws -> Store {
    try lock.withLock {
      let text = try ConfigEditor(text: try configText()).removing(table: name)
      try FileSystem.writeAtomically(rootPath + "/" + Config.fileName, Array(text.utf8), sync: true)
    }
    let reopened = try Store(rootPath: rootPath, wiring: wiring)
    try reopened.lock.withLock { try reopened.writeGitAttributes() }
    return reopened
  }

  /// Merges a file's `columns` into table `name`'s ``TableConfig/fields``
  /// as `folio.yaml` has them now: the list as it is, then the columns it
  /// lacks, in the file's order. The file is edited in place by
  /// ``ConfigEditor/setting(fields:of:)``, keeping its comments and layout.
  /// Call with the lock held.
  /// - Returns: the new list, or nil when it was complete already (and the
  ///   file was left alone).
  package func mergeFieldsLocked(_ columns: [String], ofTable name: String) throws -> [String]? {
    let editor = try ConfigEditor(text: try configText())
    guard let table = try Config(yaml: editor.text).table(named: name) else { return nil }
    var known = Set(table.fields.map { ExactKey($0) })
    let added = columns.filter { known.insert(ExactKey($0)).inserted }
    guard !added.isEmpty else { return nil }
    let fields = table.fields + added
    let text = try editor.setting(fields: fields, of: name)
    try FileSystem.writeAtomically(rootPath + "/" + Config.fileName, Array(text.utf8), sync: true)
    return fields
  }

  /// Adds `path` to the `indexes:` of table `table` in `folio.yaml`,
  /// keeping the file's comments and layout (see ``ConfigEditor``).
  ///
  /// The index itself is built by the first query that needs it (a
  /// `FolioQuery` store's `buildIndexes(table:)` builds it now).
  ///
  /// ```swift
  /// let store = try store.addIndex(FieldPath(parsing: "`dep time`"), to: "flights")
  /// ```
  /// - Returns: the store opened again on the new config.
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_CONFIG` at `folio.yaml:L:C` when
  ///   the path is indexed already (as an index or an order key); nothing
  ///   is written then.
  public func addIndex(_ path: FieldPath, to table: String) throws -> Store {
    try editingConfig { try $0.addingIndex(path.description, to: table) }
  }

  /// Removes `path` from the `indexes:` of table `table` in `folio.yaml`.
  /// The index files are rebuilt without it by the next query that reads
  /// them (a `FolioQuery` store's `buildIndexes(table:)` rebuilds them now).
  ///
  /// ```swift
  /// let store = try store.removeIndex("owner", from: "todos")
  /// ```
  /// - Returns: the store opened again on the new config.
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_CONFIG` when the table has no such
  ///   index (an order key is not one); nothing is written then.
  public func removeIndex(_ path: FieldPath, from table: String) throws -> Store {
    try editingConfig { try $0.removingIndex(path.description, from: table) }
  }

  /// Writes the text `edit` makes of `folio.yaml`, under the store lock, and
  /// opens the store again on it.
  private func editingConfig(_ edit: (ConfigEditor) throws -> String) throws -> Store {
    try lock.withLock {
      let text = try edit(try ConfigEditor(text: try configText()))
      try FileSystem.writeAtomically(rootPath + "/" + Config.fileName, Array(text.utf8), sync: true)
    }
    return try Store(rootPath: rootPath, wiring: wiring)
  }

  /// The text of `folio.yaml` as it is on disk now.
  package func configText() throws -> String {
    let bytes = try FileSystem.read(rootPath + "/" + Config.fileName) ?? []
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension Store {
  /// A schema proposed from the table's documents (see
  /// ``SchemaInference``), for `folio schema TABLE --infer`. Files that do
  /// not parse are passed over (`fsck` reports them).
  ///
  /// ```swift
  /// let proposal = try store.inferSchema(table: "todos")
  /// print(proposal.canonicalString)
  /// ```
  /// - Throws: `UNKNOWN_TABLE`.
  public func inferSchema(table name: String) throws -> JSONValue {
    let table = try table(named: name)
    var inference = SchemaInference()
    let directory = directory(of: table)
    for file in (try table.listDocumentNames(in: directory) ?? []).sorted()
    where table.pk(fromDocumentName: file) != nil {
      guard let (_, object) = (try? readDocument(at: directory + "/" + file)) ?? nil else { continue }
      inference.add(object)
    }
    let kinds = table.columns
    return inference.schema(
      title: table.name, counters: Set(kinds.filter { $0.value == .counter }.keys),
      sets: Set(kinds.filter { $0.value == .set }.keys))
  }

  /// The schema in effect for a table: its file's text as it is.
  /// - Throws: `UNKNOWN_TABLE`; `NOT_FOUND` when the table has no schema.
  public func schemaText(table name: String) throws -> [UInt8] {
    let table = try table(named: name)
    guard let schema = table.schema else {
      throw FolioError(
        .notFound,
        "table '\(name)' has no schema; add 'schema: schemas/\(name).schema.json' to its entry in \(Config.fileName)",
        table: name, remedy: .inferSchema(table: name))
    }
    return schema.source
  }
}

/// What this replica holds: its tables, and the documents it evicted.
///
/// A partial replica is a clone that holds some of the store's tables
/// (`folio clone --tables`, ``Store/subscribe(table:)``). The others stay
/// on the remote: their commits and trees are here, their documents are
/// not, and nothing this replica does records a change to them.
extension Store {
  /// Where a partial replica keeps the names of the tables it holds, one
  /// to a line. No file: the replica holds every table.
  package var heldTablesPath: String { privateDirectory + "/tables" }

  /// The names of the tables this replica holds, when it is a partial
  /// replica; nil when it holds every table. Read once per store opened
  /// (every write asks): a subscription another process makes counts for a
  /// store opened after it.
  public var heldTableNames: Set<String>? {
    heldTableNamesCache.withLock { cached in
      if let cached { return cached }
      var names: Set<String>?
      if let bytes = try? FileSystem.read(heldTablesPath) {
        names = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where !line.isEmpty {
          names!.insert(config.currentTableName(String(line)))
        }
      }
      cached = .some(names)
      return names
    }
  }

  /// The tables of `folio.yaml` this replica does not hold: a partial
  /// replica's others. Empty for a full replica.
  public var absentTables: [TableConfig] {
    guard let held = heldTableNames else { return [] }
    return config.tables.filter { !held.contains($0.name) }
  }

  /// The tables of `folio.yaml` this replica holds, in its order: every
  /// table of a full replica. What is scanned, served, watched and listed.
  public var heldTables: [TableConfig] {
    guard let held = heldTableNames else { return config.tables }
    return config.tables.filter { held.contains($0.name) }
  }

  /// Records the tables this replica holds (nil: every table).
  package func saveHeldTableNames(_ names: Set<String>?) throws {
    if let names {
      let text = names.sorted().map { $0 + "\n" }.joined()
      try FileSystem.writeAtomically(heldTablesPath, Array(text.utf8), sync: true)
    } else {
      _ = try FileSystem.remove(heldTablesPath)
    }
    heldTableNamesCache.withLock { $0 = .some(names) }
  }

  /// The error for a table this partial replica does not hold.
  package func absentTableError(_ name: String) -> FolioError {
    let held = (heldTableNames ?? []).sorted()
    return FolioError(
      .tableAbsent,
      "table '\(name)' is not on this replica: its documents stay on the remote (this partial "
        + "replica holds \(held.isEmpty ? "no table" : held.joined(separator: ", ")))",
      table: name, remedy: .subscribeTable(name))
  }

  /// Whether `pk` in `table` was evicted (and not written since).
  public func isEvicted(table: String, pk: String) throws -> Bool {
    try evictions.load()[table]?.contains(ExactKey(pk)) ?? false
  }
}

/// Editor support for the tables' schemas.
extension Store {
  /// The VS Code workspace settings file, relative to the store root.
  public static let vscodeSettingsPath = ".vscode/settings.json"

  /// Maps each table's folder to its schema in `.vscode/settings.json`
  /// (`json.schemas`), so that VS Code checks and completes documents as
  /// they are typed, with the same schema Folio enforces.
  ///
  /// The file is merged, not replaced: other settings stay, and so do other
  /// `json.schemas` entries, except those for the same files or schemas,
  /// which are replaced. The file is written in canonical form (sorted
  /// keys).
  ///
  /// ```swift
  /// let mapped = try store.writeVSCodeSettings()   // ["todos"]
  /// ```
  /// - Returns: the tables mapped (those with a schema).
  /// - Throws: `INVALID_JSON` at `file:line:col` when the existing file does
  ///   not parse (VS Code allows comments there; Folio does not, and will
  ///   not drop them); nothing is written then.
  @discardableResult
  public func writeVSCodeSettings() throws -> [String] {
    let path = rootPath + "/" + Store.vscodeSettingsPath
    var settings = JSONObject()
    if let bytes = try FileSystem.read(path), !bytes.isEmpty {
      let value = try JSONValue(parsing: bytes, file: Store.vscodeSettingsPath)
      guard case .object(let object) = value else {
        throw FolioError(
          .invalidJSON, "the settings must be a JSON object, not \(value.kindName)",
          location: .init(file: Store.vscodeSettingsPath, line: 1, column: 1))
      }
      settings = object
    }
    let tables = config.tables.filter { $0.schemaFile != nil }
    let ours: [JSONValue] = tables.map { table in
      [
        "fileMatch": .array([.string("/" + table.path + "/*.json")]),
        "url": .string("./" + table.schemaFile!),
      ]
    }
    let matches = Set(ours.compactMap { $0["fileMatch"] })
    let urls = Set(ours.compactMap { $0["url"] })
    var entries = settings["json.schemas"]?.arrayValue ?? []
    entries.removeAll { entry in
      entry["fileMatch"].map(matches.contains) == true || entry["url"].map(urls.contains) == true
    }
    settings["json.schemas"] = .array(entries + ours)
    try FileSystem.writeAtomically(
      path, JSONValue.object(settings).canonicalBytes(), sync: true, under: rootPath)
    return tables.map(\.name)
  }
}
