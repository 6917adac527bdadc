import FolioSystem

extension ConfigEditor {
  /// The text with `path` added to the `indexes:` of table `table`.
  ///
  /// An `indexes: [a, b]` list on one line is rewritten in place; a block
  /// list (`- a` lines) gets one more line; a table without the setting
  /// gets an `indexes: [path]` line at the end of its settings. Everything
  /// else in the file stays as it is.
  ///
  /// ```swift
  /// let text = try ConfigEditor(text: yaml).addingIndex("owner", to: "todos")
  /// ```
  /// - Parameter path: the path as `folio.yaml` spells it (``FieldPath``
  ///   text).
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_CONFIG` at the entry that has it
  ///   already (an index or an order key), or for a table or list written
  ///   in a flow style that cannot be edited in place.
  public func addingIndex(_ path: String, to table: String) throws -> String {
    let (pair, current) = try tableEntry(table)
    let settings = settingPairs(pair)
    if current.order.contains(path) {
      let node = listItem(path, in: settings.first { $0.key.keyText == "order" }?.value) ?? pair.key
      throw FolioError(
        .invalidConfig,
        "'\(path)' is an order key of table '\(table)', which is indexed already",
        location: location(of: node))
    }
    if current.indexes.contains(path) {
      let node = listItem(path, in: settings.first { $0.key.keyText == "indexes" }?.value) ?? pair.key
      throw FolioError(
        .invalidConfig, "'\(path)' of table '\(table)' is indexed already", location: location(of: node))
    }
    let wanted = current.indexes + [path]
    var result = lines
    try append(path, toList: "indexes", making: wanted, of: pair, settings, in: &result, else: notEditable)
    return try checked(result, table: table, indexes: wanted)
  }

  /// The text without `path` in the `indexes:` of table `table`.
  ///
  /// ```swift
  /// let text = try ConfigEditor(text: yaml).removingIndex("owner", from: "todos")
  /// ```
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_CONFIG` when the table has no such
  ///   index (naming the ones it has), for an order key (which is not an
  ///   index of its own), or for a list written in a flow style that
  ///   cannot be edited in place.
  public func removingIndex(_ path: String, from table: String) throws -> String {
    let (pair, current) = try tableEntry(table)
    let settings = settingPairs(pair)
    guard let indexes = settings.first(where: { $0.key.keyText == "indexes" }),
      current.indexes.contains(path), let item = listItem(path, in: indexes.value)
    else {
      if current.order.contains(path) {
        let node = listItem(path, in: settings.first { $0.key.keyText == "order" }?.value) ?? pair.key
        throw FolioError(
          .invalidConfig,
          "'\(path)' is an order key of table '\(table)', not one of its indexes; order keys stay indexed "
            + "while they are listed under 'order'", location: location(of: node))
      }
      let has =
        current.indexes.isEmpty
        ? "it has none" : "its indexes are: \(current.indexes.joined(separator: ", "))"
      throw FolioError(
        .invalidConfig, "table '\(table)' has no index on '\(path)'; \(has)", location: location(of: pair.key)
      )
    }
    let wanted = current.indexes.filter { $0 != path }
    var result = lines
    if isFlowList(indexes.value) {
      try replaceFlowList(indexes.value, with: wanted, in: &result)
    } else {
      guard let dash = dashLine(of: item) else { throw notEditable(indexes.value) }
      result.remove(at: dash - 1)
    }
    return try checked(result, table: table, indexes: wanted)
  }

  // MARK: Finding things

  /// Table `name`'s pair under `tables:` and its decoded settings.
  func tableEntry(_ name: String) throws -> (YAMLNode.Pair, TableConfig) {
    guard let tablesPair = topLevelPair("tables"), case .mapping(let pairs) = tablesPair.value.content,
      let pair = pairs.first(where: { $0.key.keyText == name }), let table = config.table(named: name)
    else { throw config.unknownTableError(name) }
    guard !isFlow(tablesPair.value) else { throw flowStyle() }
    if isFlow(pair.value) {
      throw FolioError(
        .invalidConfig,
        "table '\(name)' is written in flow style ({…}); write its settings as a block (one per line), "
          + "so that they can be changed in place", location: location(of: pair.value))
    }
    return (pair, table)
  }

  func settingPairs(_ pair: YAMLNode.Pair) -> [YAMLNode.Pair] {
    guard case .mapping(let settings) = pair.value.content else { return [] }
    return settings
  }

  /// The item `text` of a list node, if it holds one.
  private func listItem(_ text: String, in node: YAMLNode?) -> YAMLNode? {
    guard case .sequence(let items)? = node?.content else { return nil }
    return items.first { $0.text == text }
  }

  /// Whether a list is written in brackets (`[a, b]`), not as `- a` lines.
  /// Adds `item` to the list setting `key` of the table entry `pair` (whose
  /// settings are `settings`), so that it reads `wanted`: one more `- item`
  /// line under a block list's last, at its indentation; a one-line list
  /// rewritten; a `key:` with nothing after it filled; a missing setting
  /// added as a line at the end of the table's settings.
  /// - Parameter notEditable: the error for a list that cannot be edited
  ///   in place.
  func append(
    _ item: String, toList key: String, making wanted: [String], of pair: YAMLNode.Pair,
    _ settings: [YAMLNode.Pair], in result: inout [String], else notEditable: (YAMLNode) -> FolioError
  ) throws {
    guard let list = settings.first(where: { $0.key.keyText == key }) else {
      let (indent, after) = settingsInsertion(pair, settings)
      result.insert(String(repeating: " ", count: indent) + key + ": " + Self.flowList(wanted), at: after)
      return
    }
    switch list.value.content {
    case .sequence(let items) where !isFlowList(list.value):
      guard let last = items.last, let dash = dashLine(of: last) else { throw notEditable(list.value) }
      let indent = String(lines[dash - 1].prefix { $0 == " " })
      result.insert(indent + "- " + Config.yamlString(item), at: dash)
    case .sequence:
      try replaceFlowList(list.value, with: wanted, in: &result)
    default:
      try replaceNull(list, with: wanted, in: &result)
    }
  }

  func isFlowList(_ node: YAMLNode) -> Bool {
    guard node.line >= 1, node.line <= lines.count else { return false }
    let scalars = Array(lines[node.line - 1].unicodeScalars)
    return node.column - 1 < scalars.count && scalars[node.column - 1] == "["
  }

  /// The 1-based line of a block list item, when that line holds the item
  /// alone after its `-`, so that it can be removed or followed by another.
  func dashLine(of item: YAMLNode) -> Int? {
    guard case .scalar = item.content, item.line >= 1, item.line <= lines.count else { return nil }
    let trimmed = lines[item.line - 1].drop { $0 == " " }
    return trimmed.hasPrefix("-") ? item.line : nil
  }

  /// Where a new setting of table `pair` goes: its indentation, and the
  /// 0-based line index to insert at (after the table's last setting).
  func settingsInsertion(_ pair: YAMLNode.Pair, _ settings: [YAMLNode.Pair]) -> (Int, Int) {
    let indent = settings.first.map { $0.key.column - 1 } ?? pair.key.column + 1
    guard let tablesPair = topLevelPair("tables"), case .mapping(let tables) = tablesPair.value.content,
      let index = tables.firstIndex(where: { $0.key.keyText == pair.key.keyText })
    else { return (indent, pair.key.line) }
    let end =
      index + 1 < tables.count
      ? trimmedEnd(tables[index + 1].key.line - 1, from: pair.key.line)
      : blockEnd(after: tablesPair.key.line, before: nextTopLevelLine(after: tablesPair))
    return (indent, max(end, pair.key.line))
  }

  // MARK: Editing

  /// Replaces a one-line `[…]` list with `paths`, keeping what follows it
  /// on the line (a comment).
  func replaceFlowList(_ node: YAMLNode, with paths: [String], in result: inout [String]) throws {
    var scalars = Array(result[node.line - 1].unicodeScalars)
    guard let close = Self.closingBracket(in: scalars, from: node.column - 1) else { throw notEditable(node) }
    scalars.replaceSubrange((node.column - 1)...close, with: Self.flowList(paths).unicodeScalars)
    result[node.line - 1] = String(String.UnicodeScalarView(scalars))
  }

  /// Writes `paths` after a key whose value is null on its own line
  /// (`indexes:` or `indexes: ~`), keeping a trailing comment.
  func replaceNull(_ pair: YAMLNode.Pair, with paths: [String], in result: inout [String]) throws {
    guard pair.value.isNull else { throw notEditable(pair.value) }
    let line = Array(result[pair.key.line - 1].unicodeScalars)
    let keyEnd = pair.key.column - 1 + pair.key.keyText.unicodeScalars.count
    guard keyEnd < line.count, line[keyEnd] == ":" else { throw notEditable(pair.value) }
    let rest = String(String.UnicodeScalarView(line[(keyEnd + 1)...]))
    let comment = (" " + rest).range(of: " #").map { "  " + (" " + rest)[$0.lowerBound...].dropFirst() }
    let head = String(String.UnicodeScalarView(line[...keyEnd]))
    result[pair.key.line - 1] = head + " " + Self.flowList(paths) + (comment ?? "")
  }

  /// The `]` that closes the `[` at `start`, on the same line, skipping
  /// quoted text and nested brackets; nil when the list goes on past the
  /// line.
  static func closingBracket(in scalars: [Unicode.Scalar], from start: Int) -> Int? {
    guard start < scalars.count, scalars[start] == "[" else { return nil }
    var depth = 0
    var quote: Unicode.Scalar?
    var index = start
    while index < scalars.count {
      let c = scalars[index]
      if let open = quote {
        if c == "\\" && open == "\"" {
          index += 1
        } else if c == open {
          quote = nil
        }
      } else if c == "\"" || c == "'" {
        quote = c
      } else if c == "[" {
        depth += 1
      } else if c == "]" {
        depth -= 1
        if depth == 0 { return index }
      }
      index += 1
    }
    return nil
  }

  static func flowList(_ paths: [String]) -> String {
    "[" + paths.map(Config.yamlString).joined(separator: ", ") + "]"
  }

  /// The edited lines as text, loaded back to make sure the table now has
  /// exactly `indexes`: an edit that would not read back as meant is never
  /// written.
  private func checked(_ result: [String], table: String, indexes: [String]) throws -> String {
    var text = result.joined(separator: "\n")
    if !text.hasSuffix("\n") { text += "\n" }
    let edited = try Config(yaml: text, file: file)
    guard edited.table(named: table)?.indexes == indexes else {
      throw FolioError(
        .invalidConfig,
        "cannot change the indexes of table '\(table)' in place; edit 'indexes:' by hand",
        location: location(of: topLevelPair("tables")?.key))
    }
    return text
  }

  private func notEditable(_ node: YAMLNode) -> FolioError {
    FolioError(
      .invalidConfig,
      "this list cannot be changed in place; write it on one line ([a, b]) or as one '- path' per line",
      location: location(of: node))
  }
}
