import FolioJSON
import FolioSystem

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
