import FolioSystem

extension ConfigEditor {
  /// The text with table `old` renamed `new`, and the table as it is then.
  ///
  /// The key changes on its line; a `path:` at the default place for the
  /// old name (`data/old`) becomes the one for the new name, as does a
  /// path that defaults to the name; and `old` is added to the table's
  /// `renamed-from:`, so that ops and files another replica still makes
  /// under the old name are read as this table's. Everything else in the
  /// file stays as it is.
  ///
  /// ```swift
  /// let (text, table) = try ConfigEditor(text: yaml).renaming(table: "todos", to: "tasks")
  /// table.path   // "data/tasks" for a table that was at data/todos
  /// ```
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_CONFIG` for a bad new name, one
  ///   another table has or had, or a table written in flow style.
  public func renaming(table old: String, to new: String) throws -> (text: String, table: TableConfig) {
    let (pair, current) = try tableEntry(old)
    if let existing = config.table(named: new) {
      throw FolioError(
        .invalidConfig, "table '\(existing.name)' already exists; pick another name",
        location: location(of: tableKey(existing.name, in: topLevelPair("tables"))))
    }
    if let owner = config.tables.first(where: { $0.renamedFrom.contains(new) }) {
      throw FolioError(
        .invalidConfig,
        "'\(new)' is a former name of table '\(owner.name)' (its 'renamed-from'), and ops recorded under it "
          + "belong to that table; pick another name",
        location: location(of: tableKey(owner.name, in: topLevelPair("tables"))))
    }
    var renamed = current
    renamed.name = new
    var segments = current.path.split(separator: "/").map(String.init)
    if segments.last == old { segments[segments.count - 1] = new }
    renamed.path = segments.joined(separator: "/")
    renamed.renamedFrom = current.renamedFrom + [old]
    // The new name on its own first, with the decoder's words.
    do {
      _ = try Config(yaml: Config(tables: [renamed]).yamlText(), file: file)
    } catch let error as FolioError {
      throw FolioError(.invalidConfig, error.message)
    }
    for other in config.tables where other.name != old {
      guard let clash = Self.clash(renamed.path, other) else { continue }
      throw FolioError(.invalidConfig, clash, location: location(of: pair.key))
    }

    var result = lines
    let settings = settingPairs(pair)
    if let path = settings.first(where: { $0.key.keyText == "path" }), !path.value.isNull,
      renamed.path != current.path
    {
      try replaceScalar(path.value, with: Config.yamlString(renamed.path), in: &result)
    }
    try replaceScalar(pair.key, with: Config.yamlString(new), in: &result)

    // `renamed-from` last: it may add a line, which moves the lines after it.
    try append(
      old, toList: "renamed-from", making: renamed.renamedFrom, of: pair, settings, in: &result,
      else: notRenamable)
    var text = result.joined(separator: "\n")
    if !text.hasSuffix("\n") { text += "\n" }
    let edited = try Config(yaml: text, file: file)
    guard let table = edited.table(named: new), table.path == renamed.path,
      table.renamedFrom == renamed.renamedFrom, edited.table(named: old) == nil
    else {
      throw FolioError(
        .invalidConfig, "cannot rename table '\(old)' in place; edit \(file) by hand",
        location: location(of: pair.key))
    }
    return (text, table)
  }

  /// Replaces the one-line scalar at `node` (a key or a value, plain or
  /// quoted) with `replacement`.
  private func replaceScalar(_ node: YAMLNode, with replacement: String, in result: inout [String]) throws {
    guard case .scalar(let text, _) = node.content, node.line >= 1, node.line <= result.count else {
      throw notRenamable(node)
    }
    var scalars = Array(result[node.line - 1].unicodeScalars)
    let start = node.column - 1
    var end = start + text.unicodeScalars.count
    if start < scalars.count, scalars[start] == "\"" || scalars[start] == "'" {
      // A quoted scalar: through its closing quote, with nothing escaped.
      end += 2
      guard end <= scalars.count, scalars[end - 1] == scalars[start] else { throw notRenamable(node) }
    }
    guard end <= scalars.count,
      String(String.UnicodeScalarView(scalars[start..<end])).contains(text)
    else { throw notRenamable(node) }
    scalars.replaceSubrange(start..<end, with: replacement.unicodeScalars)
    result[node.line - 1] = String(String.UnicodeScalarView(scalars))
  }

  private func notRenamable(_ node: YAMLNode) -> FolioError {
    FolioError(
      .invalidConfig, "cannot rename the table in place here; edit \(file) by hand",
      location: location(of: node))
  }
}
