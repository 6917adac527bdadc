import FolioJSON
import FolioSystem
import Glibc

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
