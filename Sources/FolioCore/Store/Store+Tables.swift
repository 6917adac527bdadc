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

  /// The text of `folio.yaml` as it is on disk now.
  private func configText() throws -> String {
    let bytes = try FileSystem.read(rootPath + "/" + Config.fileName) ?? []
    return String(decoding: bytes, as: UTF8.self)
  }
}
