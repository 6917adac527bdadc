import FolioSystem

extension Config {
  /// A YAML rendering that parses back to an equal config; `folio init`
  /// writes it as `folio.yaml`.
  ///
  /// Every table lists its `path`, `key` and `order`, defaults included, so
  /// the file shows a newcomer what can be set. Columns are listed in name
  /// order, so the same config always renders to the same bytes.
  ///
  /// ```swift
  /// let text = Config(tables: [TableConfig(name: "todos", order: ["lastUpdate"])]).yamlText()
  /// // version: 1
  /// // tables:
  /// //   todos:
  /// //     path: todos
  /// //     key: id
  /// //     order: [lastUpdate]
  /// ```
  ///
  /// The round trip holds for a config that passes validation; a config
  /// built in code with, say, two tables on one path renders faithfully but
  /// fails to parse back.
  public func yamlText() -> String {
    var text = "version: \(version)\n"
    guard !tables.isEmpty else {
      return text + "tables: {}\n" + syncText() + indexText() + serveText() + limitsText()
    }
    text += "tables:\n"
    for table in tables { text += Self.entryText(for: table, indent: 2) }
    return text + syncText() + indexText() + serveText() + limitsText()
  }

  /// One table's entry under `tables:`, its name indented by `indent`
  /// spaces and its settings two more, ending with a newline.
  static func entryText(for table: TableConfig, indent: Int) -> String {
    let outer = String(repeating: " ", count: indent)
    let inner = outer + "  "
    var text = "\(outer)\(yamlString(table.name)):\n"
    text += "\(inner)path: \(yamlString(table.path))\n"
    text += "\(inner)key: \(table.key.map(yamlString) ?? "null")\n"
    text += "\(inner)order: [\(table.order.map(yamlString).joined(separator: ", "))]\n"
    if table.layout != .flat { text += "\(inner)layout: \(table.layout.rawValue)\n" }
    if !table.indexes.isEmpty {
      text += "\(inner)indexes: [\(table.indexes.map(yamlString).joined(separator: ", "))]\n"
    }
    if !table.fields.isEmpty {
      text += fieldsLine(table.fields, indent: inner.count) + "\n"
    }
    if !table.renamedFrom.isEmpty {
      text += "\(inner)renamed-from: [\(table.renamedFrom.map(yamlString).joined(separator: ", "))]\n"
    }
    if !table.columns.isEmpty {
      text += "\(inner)columns:\n"
      for (column, kind) in table.columns.sorted(by: { $0.key < $1.key }) {
        text += "\(inner)  \(yamlString(column)): \(kind.rawValue)\n"
      }
    }
    return text
  }

  /// A table's `fields:` setting on one line, indented by `indent` spaces.
  static func fieldsLine(_ fields: [String], indent: Int) -> String {
    String(repeating: " ", count: indent) + "fields: [\(fields.map(yamlString).joined(separator: ", "))]"
  }

  /// The `index:` section, written only when it differs from the defaults.
  private func indexText() -> String {
    guard index != IndexConfig() else { return "" }
    return "index:\n  daemon: \(index.daemon.rawValue)\n  idle: \(DurationParser.format(index.idle))\n"
  }

  /// The `limits:` section, written only when it differs from the default.
  private func limitsText() -> String {
    guard limits != LimitsConfig() else { return "" }
    return "limits:\n  document: \(ByteSize.format(limits.documentBytes))\n"
  }

  /// The `serve:` section, written only when it names something.
  private func serveText() -> String {
    guard serve != ServeConfig() else { return "" }
    var text = "serve:\n"
    if !serve.cors.isEmpty {
      text += "  cors: [\(serve.cors.map(Self.yamlString).joined(separator: ", "))]\n"
    }
    if !serve.allowHosts.isEmpty {
      text += "  allow-host: [\(serve.allowHosts.map(Self.yamlString).joined(separator: ", "))]\n"
    }
    return text
  }

  /// The `sync:` section, written only when it differs from the defaults.
  private func syncText() -> String {
    guard sync.isExplicit else { return "" }
    let every = sync.pullEvery.map { DurationParser.format($0) } ?? "off"
    let key = sync.sshKey.map { "  ssh-key: \(Self.yamlString($0))\n" } ?? ""
    let skew =
      sync.maxClockSkew == SyncConfig.defaultMaxClockSkew
      ? "" : "  max-clock-skew: \(DurationParser.format(sync.maxClockSkew))\n"
    return "sync:\n  remote: \(Self.yamlString(sync.remote))\n  pull-every: \(every)\n" + key + skew
  }

  /// Words that a YAML reader (1.1 or 1.2) could take for null or a boolean
  /// when written plain.
  private static let reservedWords: Set<String> = [
    "null", "true", "false", "yes", "no", "on", "off", "y", "n",
  ]

  /// `string` as a YAML scalar: plain when that is unambiguous to any YAML
  /// reader, double-quoted otherwise.
  ///
  /// Plain needs a letter or `_` first (no number, indicator or special
  /// float such as `.inf`), then only `[A-Za-z0-9_./-]`, which are safe in
  /// block and flow context alike.
  static func yamlString(_ string: String) -> String {
    if let first = string.unicodeScalars.first,
      isPlainStart(first),
      string.unicodeScalars.allSatisfy(isPlainSafe),
      !reservedWords.contains(string.lowercased())
    {
      return string
    }
    var quoted = "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": quoted += "\\\""
      case "\\": quoted += "\\\\"
      case "\n": quoted += "\\n"
      case "\t": quoted += "\\t"
      case "\r": quoted += "\\r"
      case "\0": quoted += "\\0"
      default:
        if needsEscape(scalar) {
          let hex = String(scalar.value, radix: 16, uppercase: true)
          if scalar.value <= 0xFFFF {
            quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
          } else {
            quoted += "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
          }
        } else {
          quoted.unicodeScalars.append(scalar)
        }
      }
    }
    return quoted + "\""
  }

  private static func isPlainStart(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "a"..."z", "A"..."Z", "_": return true
    default: return false
    }
  }

  private static func isPlainSafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "/", "-": return true
    default: return false
    }
  }

  /// Characters a YAML reader rejects or reads as a line break, so they must
  /// be written as escapes: C0 and C1 controls, DEL, the Unicode line and
  /// paragraph separators, the byte-order mark and the two non-characters.
  private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF: return true
    default: return false
    }
  }
}
