import FolioSystem

/// Adds and removes tables in the text of a `folio.yaml`, keeping every
/// comment, blank line and indentation the file already has.
///
/// It never re-serialises the whole file: it finds the `tables:` block by
/// the positions the YAML parser gives, inserts or deletes whole lines
/// there, and then loads the result, so an edit that would not parse back
/// is never written.
///
/// ```swift
/// let editor = try ConfigEditor(text: yaml)
/// let (text, entry) = try editor.adding(TableConfig(name: "people", path: "data/people"))
/// ```
public struct ConfigEditor: Sendable {
  /// The file as it is.
  public let text: String
  /// The name errors give the file.
  public let file: String
  let lines: [String]
  let root: YAMLNode?
  let config: Config

  /// Parses `text`, which must be a valid config.
  /// - Throws: `INVALID_CONFIG` at `file:line:col`, as loading it would.
  public init(text: String, file: String = Config.fileName) throws {
    self.text = text
    self.file = file
    lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    root = try YAMLParser(bytes: text.utf8, file: file).parseSingleDocument()
    config = try Config(yaml: text, file: file)
  }

  /// The text with `table` added under `tables:`, and the lines added.
  /// - Throws: `INVALID_CONFIG` for a table that is not valid on its own (a
  ///   bad name or path), or, at the clashing entry's `file:line:col`, for a
  ///   name or folder another table has.
  public func adding(_ table: TableConfig) throws -> (text: String, entry: String) {
    // The table on its own first: its name, path and columns, with the
    // decoder's own words, but no position in a file that lacks it.
    do {
      _ = try Config(yaml: Config(tables: [table]).yamlText(), file: file)
    } catch let error as FolioError {
      throw FolioError(.invalidConfig, error.message)
    }
    let tablesPair = topLevelPair("tables")
    if let existing = config.table(named: table.name) {
      throw FolioError(
        .invalidConfig,
        "table '\(existing.name)' already exists; remove it first, or pick another name",
        location: location(of: tableKey(existing.name, in: tablesPair)), remedy: .removeTable(existing.name))
    }
    for other in config.tables {
      guard let clash = Self.clash(table.path, other) else { continue }
      throw FolioError(
        .invalidConfig, clash + "; give the new table another --path",
        location: location(of: pathNode(of: other.name, in: tablesPair)))
    }

    var result = lines
    let entryIndent: Int
    let insertAt: Int  // a 0-based line index
    if let tablesPair {
      let value = tablesPair.value
      if case .mapping(let pairs) = value.content, let first = pairs.first {
        guard !isFlow(value) else { throw flowStyle() }
        entryIndent = first.key.column - 1
        insertAt = blockEnd(after: tablesPair.key.line, before: nextTopLevelLine(after: tablesPair))
      } else {
        if isFlow(value) {
          // `tables: {}`, as `folio init` writes it: the braces go.
          var scalars = Array(result[value.line - 1].unicodeScalars)
          guard let close = scalars[(value.column - 1)...].firstIndex(of: "}") else { throw flowStyle() }
          scalars.removeSubrange((value.column - 1)...close)
          result[value.line - 1] = Self.trimmingTrailingSpaces(String(String.UnicodeScalarView(scalars)))
        }
        entryIndent = 2
        insertAt = tablesPair.key.line
      }
    } else {
      while result.last == "" { result.removeLast() }
      result.append("tables:")
      entryIndent = 2
      insertAt = result.count
    }
    let entry = Config.entryText(for: table, indent: entryIndent)
    let entryLines = entry.split(separator: "\n").map(String.init)
    result.insert(contentsOf: entryLines, at: insertAt)
    var newText = result.joined(separator: "\n")
    if !newText.hasSuffix("\n") { newText += "\n" }
    _ = try Config(yaml: newText, file: file)
    return (newText, entry)
  }

  /// The text without table `name`'s entry (its documents are not touched).
  /// - Throws: `UNKNOWN_TABLE` naming the tables there are.
  public func removing(table name: String) throws -> String {
    guard let tablesPair = topLevelPair("tables"), case .mapping(let pairs) = tablesPair.value.content,
      let index = pairs.firstIndex(where: { $0.key.keyText == name })
    else { throw config.unknownTableError(name) }
    guard !isFlow(tablesPair.value) else { throw flowStyle() }
    // The entry's own comment lines, right above it at its indentation, go
    // with it.
    var start = pairs[index].key.line - 1
    let indent = String(repeating: " ", count: pairs[index].key.column - 1)
    while start > tablesPair.key.line, lines[start - 1].hasPrefix(indent + "#") { start -= 1 }
    let end =
      index + 1 < pairs.count
      ? trimmedEnd(pairs[index + 1].key.line - 1, from: start + 1)
      : blockEnd(after: tablesPair.key.line, before: nextTopLevelLine(after: tablesPair))
    var result = lines
    result.removeSubrange(start..<max(end, start + 1))
    var newText = result.joined(separator: "\n")
    if !newText.hasSuffix("\n") { newText += "\n" }
    _ = try Config(yaml: newText, file: file)
    return newText
  }

  /// The text with table `name`'s `fields:` set to `fields`: its line
  /// replaced where it is, or added as the entry's last setting. The rest
  /// of the file keeps its bytes.
  /// - Throws: `UNKNOWN_TABLE` when there is no such table; `INVALID_CONFIG`
  ///   for an entry written in flow style.
  public func setting(fields: [String], of name: String) throws -> String {
    try setting("fields", of: name) { Config.fieldsLine(fields, indent: $0) }
  }

  /// The text with table `name`'s `layout:` set to `layout`, as
  /// ``setting(fields:of:)`` sets `fields:`.
  /// - Throws: as ``setting(fields:of:)``.
  public func setting(layout: TableLayout, of name: String) throws -> String {
    try setting("layout", of: name) { String(repeating: " ", count: $0) + "layout: " + layout.rawValue }
  }

  /// The text with table `name`'s setting `key` replaced by the line
  /// `line(indent)`, or that line added as the entry's last setting.
  private func setting(_ key: String, of name: String, line: (Int) -> String) throws -> String {
    guard let tablesPair = topLevelPair("tables"), case .mapping(let tables) = tablesPair.value.content,
      let index = tables.firstIndex(where: { $0.key.keyText == name })
    else { throw config.unknownTableError(name) }
    guard !isFlow(tablesPair.value) else { throw flowStyle() }
    let entry = tables[index]
    // The entry's last line (0-based, exclusive): comments and blank lines
    // before the next table belong to it.
    let entryEnd =
      index + 1 < tables.count
      ? trimmedEnd(tables[index + 1].key.line - 1, from: entry.key.line)
      : blockEnd(after: tablesPair.key.line, before: nextTopLevelLine(after: tablesPair))
    var result = lines
    var insertAt = max(entryEnd, entry.key.line)
    var indent = entry.key.column - 1 + 2
    if case .mapping(let settings) = entry.value.content, let first = settings.first {
      guard !isFlow(entry.value) else {
        throw FolioError(
          .invalidConfig,
          "table '\(name)' is written in flow style ({…}); write its settings as a block, one per line, "
            + "so that '\(key)' can be set in place", location: location(of: entry.value))
      }
      indent = first.key.column - 1
      if let at = settings.firstIndex(where: { $0.key.keyText == key }) {
        let start = settings[at].key.line - 1
        let end =
          at + 1 < settings.count ? trimmedEnd(settings[at + 1].key.line - 1, from: start + 1) : insertAt
        result.removeSubrange(start..<max(end, start + 1))
        insertAt = start
      }
    }
    result.insert(line(indent), at: insertAt)
    var newText = result.joined(separator: "\n")
    if !newText.hasSuffix("\n") { newText += "\n" }
    _ = try Config(yaml: newText, file: file)
    return newText
  }

  // MARK: Finding things

  func topLevelPair(_ key: String) -> YAMLNode.Pair? {
    guard let root, case .mapping(let pairs) = root.content else { return nil }
    return pairs.first { $0.key.keyText == key }
  }

  func tableKey(_ name: String, in tables: YAMLNode.Pair?) -> YAMLNode? {
    guard case .mapping(let pairs)? = tables?.value.content else { return nil }
    return pairs.first { $0.key.keyText == name }?.key
  }

  /// The node to blame for table `name`'s folder: its `path` value, or its
  /// name when the path defaults to it.
  private func pathNode(of name: String, in tables: YAMLNode.Pair?) -> YAMLNode? {
    guard case .mapping(let pairs)? = tables?.value.content,
      let pair = pairs.first(where: { $0.key.keyText == name })
    else { return nil }
    if case .mapping(let settings) = pair.value.content,
      let path = settings.first(where: { $0.key.keyText == "path" })
    {
      return path.value
    }
    return pair.key
  }

  func location(of node: YAMLNode?) -> FolioError.SourceLocation {
    .init(file: file, line: node?.line ?? 1, column: node?.column ?? 1)
  }

  /// The 1-based line of the top-level key after `pair`, or one past the
  /// last line.
  func nextTopLevelLine(after pair: YAMLNode.Pair) -> Int {
    guard let root, case .mapping(let pairs) = root.content,
      let index = pairs.firstIndex(where: { $0.key.keyText == pair.key.keyText }), index + 1 < pairs.count
    else { return lines.count + 1 }
    return pairs[index + 1].key.line
  }

  /// The 0-based index just past the last indented line of a block that
  /// starts after line `keyLine` and ends before line `next` (both 1-based).
  /// Blank lines and comments at the left margin before `next` belong to
  /// what follows.
  func blockEnd(after keyLine: Int, before next: Int) -> Int {
    var end = keyLine
    for index in keyLine..<min(next - 1, lines.count) {
      let line = lines[index]
      if let first = line.first, first == " " || first == "\t",
        line.contains(where: { $0 != " " && $0 != "\t" })
      {
        end = index + 1
      }
    }
    return end
  }

  /// `end` (0-based, exclusive) moved back over blank lines and comments,
  /// which belong to the entry after them; never before `start`.
  func trimmedEnd(_ end: Int, from start: Int) -> Int {
    var end = end
    while end > start {
      let trimmed = lines[end - 1].drop { $0 == " " || $0 == "\t" }
      guard trimmed.isEmpty || trimmed.hasPrefix("#") else { break }
      end -= 1
    }
    return end
  }

  func isFlow(_ node: YAMLNode) -> Bool {
    guard node.line >= 1, node.line <= lines.count else { return false }
    let scalars = Array(lines[node.line - 1].unicodeScalars)
    return node.column - 1 < scalars.count && scalars[node.column - 1] == "{"
  }

  func flowStyle() -> FolioError {
    FolioError(
      .invalidConfig,
      "'tables' is written in flow style ({…}); write it as a block (one table per line), so that "
        + "tables can be added and removed in place", location: location(of: topLevelPair("tables")?.value))
  }

  /// Why folder `new` cannot sit beside `other`'s (the same folder, inside
  /// it or around it), or nil when they are apart.
  static func clash(_ new: String, _ other: TableConfig) -> String? {
    if new == other.path { return "the folder '\(new)' is already the folder of table '\(other.name)'" }
    let relation =
      new.hasPrefix(other.path + "/")
      ? "would lie inside" : other.path.hasPrefix(new + "/") ? "would contain" : nil
    return relation.map { "the folder '\(new)' \($0) '\(other.path)', the folder of table '\(other.name)'" }
  }

  static func trimmingTrailingSpaces(_ text: String) -> String {
    var copy = text
    while copy.last == " " { copy.removeLast() }
    return copy
  }
}
