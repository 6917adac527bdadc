import FolioSystem

/// Turns a parsed `folio.yaml` tree into a validated ``Config``.
///
/// Every rule of the schema lives here, and every violation is a
/// ``FolioError`` `.invalidConfig` that points at the offending key or value,
/// so the person editing the file sees `folio.yaml:LINE:COL: error: …` and
/// nothing runs on a half-understood config.
struct ConfigDecoder {
  /// The file name that errors report.
  let file: String
  /// The store root, where tables' schema files are read from; nil when
  /// the config is read from text alone (a schema is then named, not read).
  var root: String? = nil

  static let topLevelKeys = ["version", "tables", "sync", "index", "serve", "limits"]
  static let serveKeys = ["cors", "allow-host"]
  static let syncKeys = ["remote", "pull-every", "ssh-key", "max-clock-skew"]
  static let indexKeys = ["daemon", "idle"]
  static let tableKeys = [
    "path", "key", "order", "indexes", "columns", "schema", "fields", "renamed-from", "layout",
  ]
  static let supportedVersion = 1

  /// Decodes the document's root (`nil` for a file without a document).
  func decode(_ root: YAMLNode?) throws -> Config {
    guard let root, !root.isNull else {
      // An empty document's null sits wherever the text ends; the start of
      // the file is where 'version' belongs.
      throw FolioError(
        .invalidConfig, "missing 'version'; \(file) must start with 'version: 1'",
        location: .init(file: file, line: 1, column: 1))
    }
    guard case .mapping(let pairs) = root.content else {
      throw error(
        "the top level of \(file) must be a mapping with 'version' and 'tables'; "
          + "found \(root.typeDescription)", at: root)
    }

    // The version comes first whatever its place in the file: a file written
    // for another version would otherwise fail on some unknown key, which
    // hides the real problem.
    guard let versionPair = pairs.first(where: { $0.key.keyText == "version" }) else {
      throw error("missing 'version'; \(file) must start with 'version: 1'", at: root)
    }
    try checkVersion(versionPair.value)

    var tables: [TableConfig] = []
    var sync = SyncConfig()
    var index = IndexConfig()
    var serve = ServeConfig()
    var limits = LimitsConfig()
    for pair in pairs {
      switch pair.key.keyText {
      case "version":
        continue
      case "tables":
        tables = try decodeTables(pair.value)
      case "sync":
        sync = try decodeSync(pair.value)
      case "index":
        index = try decodeIndex(pair.value)
      case "serve":
        serve = try decodeServe(pair.value)
      case "limits":
        limits = try decodeLimits(pair.value)
      default:
        throw unknownKey(pair.key, expected: Self.topLevelKeys)
      }
    }
    return Config(
      version: Self.supportedVersion, tables: tables, sync: sync, index: index, serve: serve, limits: limits)
  }

  // MARK: - Sync

  private func decodeSync(_ node: YAMLNode) throws -> SyncConfig {
    var sync = SyncConfig()
    if node.isNull { return sync }
    guard case .mapping(let pairs) = node.content else {
      throw error(
        "'sync' must be a mapping with \(Self.syncKeys.joined(separator: " and ")); found \(node.typeDescription)",
        at: node)
    }
    for pair in pairs {
      let value = pair.value
      switch pair.key.keyText {
      case "remote":
        guard let text = value.text, !text.isEmpty else {
          throw error("'remote' in 'sync' must name a git remote, such as origin", at: value)
        }
        sync.remote = text
      case "pull-every":
        if let text = value.text, ["off", "false", "no", "never"].contains(text.lowercased()) {
          sync.pullEvery = nil
        } else {
          sync.pullEvery = try decodeDuration(
            value, key: "pull-every", section: "sync", example: "30s or 5m, or off")
        }
      case "ssh-key":
        sync.sshKey = try decodeSSHKey(value)
      case "max-clock-skew":
        sync.maxClockSkew = try decodeDuration(value, key: "max-clock-skew", section: "sync", example: "24h")
      default:
        throw error(
          "unknown key '\(pair.key.keyText)' in 'sync'; expected one of: \(Self.syncKeys.joined(separator: ", "))",
          at: pair.key)
      }
    }
    sync.isExplicit = true
    return sync
  }

  /// `ssh-key`: a path to a private key file. Only the path's shape is
  /// checked here; a missing file is reported when a remote asks for it.
  /// A duration setting, such as `pull-every: 30s`, with the key, its
  /// section and examples in any error.
  private func decodeDuration(_ value: YAMLNode, key: String, section: String, example: String) throws
    -> Duration
  {
    guard let text = value.text else {
      throw error(
        "'\(key)' in '\(section)' must be a duration such as \(example); found \(value.typeDescription)",
        at: value)
    }
    do {
      return try DurationParser.parse(text)
    } catch let failure as FolioError {
      throw error("'\(key)' in '\(section)': \(failure.message)", at: value)
    }
  }

  private func decodeSSHKey(_ value: YAMLNode) throws -> String {
    guard let text = value.text, !text.isEmpty else {
      throw error(
        "'ssh-key' in 'sync' must be the path of an ssh private key file, such as ~/.ssh/id_ed25519; "
          + "found \(value.isNull ? "nothing" : value.typeDescription)", at: value)
    }
    if text.hasPrefix("~") && text != "~" && !text.hasPrefix("~/") {
      throw error(
        "'ssh-key' in 'sync': only '~/' is expanded (to your home folder), not '\(text.prefix { $0 != "/" })'; "
          + "write the full path", at: value)
    }
    if text.utf8.contains(0) || text.contains("\n") {
      throw error("'ssh-key' in 'sync' must be a path on one line", at: value)
    }
    return text
  }

  // MARK: - Index

  private func decodeIndex(_ node: YAMLNode) throws -> IndexConfig {
    var index = IndexConfig()
    if node.isNull { return index }
    guard case .mapping(let pairs) = node.content else {
      throw error(
        "'index' must be a mapping with \(Self.indexKeys.joined(separator: " and ")); found \(node.typeDescription)",
        at: node)
    }
    for pair in pairs {
      let value = pair.value
      switch pair.key.keyText {
      case "daemon":
        // YAML 1.1 reads a bare `off` as false: accept both spellings.
        guard let text = value.text, let mode = IndexConfig.DaemonMode(rawValue: text.lowercased())
        else {
          throw error(
            "'daemon' in 'index' must be auto or off; found \(value.text.map { "'\($0)'" } ?? value.typeDescription)",
            at: value)
        }
        index.daemon = mode
      case "idle":
        index.idle = try decodeDuration(value, key: "idle", section: "index", example: "30m or 1h")
      default:
        throw error(
          "unknown key '\(pair.key.keyText)' in 'index'; expected one of: \(Self.indexKeys.joined(separator: ", "))",
          at: pair.key)
      }
    }
    return index
  }

  // MARK: - Limits

  private func decodeLimits(_ node: YAMLNode) throws -> LimitsConfig {
    var limits = LimitsConfig()
    if node.isNull { return limits }
    guard case .mapping(let pairs) = node.content else {
      throw error("'limits' must be a mapping with 'document'; found \(node.typeDescription)", at: node)
    }
    for pair in pairs {
      guard pair.key.keyText == "document" else {
        throw error("unknown key '\(pair.key.keyText)' in 'limits'; expected: document", at: pair.key)
      }
      let most = ByteSize.format(LimitsConfig.maximumDocumentBytes)
      guard let text = pair.value.text, let bytes = ByteSize.parse(text), bytes >= 1024,
        bytes <= LimitsConfig.maximumDocumentBytes
      else {
        throw error(
          "'document' in 'limits' must be a size from 1K to \(most), such as 4M or 65536; a merge reads no document over \(most), so the limit may be lowered, not raised",
          at: pair.value)
      }
      limits.documentBytes = bytes
    }
    return limits
  }

  // MARK: - Serve

  private func decodeServe(_ node: YAMLNode) throws -> ServeConfig {
    var serve = ServeConfig()
    if node.isNull { return serve }
    guard case .mapping(let pairs) = node.content else {
      throw error(
        "'serve' must be a mapping with \(Self.serveKeys.joined(separator: " and ")); found \(node.typeDescription)",
        at: node)
    }
    for pair in pairs {
      switch pair.key.keyText {
      case "cors":
        serve.cors = try decodeNames(pair.value, key: "cors", check: ServeConfig.problem(withOrigin:))
      case "allow-host":
        serve.allowHosts = try decodeNames(
          pair.value, key: "allow-host", check: ServeConfig.problem(withHost:))
      default:
        throw error(
          "unknown key '\(pair.key.keyText)' in 'serve'; expected one of: \(Self.serveKeys.joined(separator: ", "))",
          at: pair.key)
      }
    }
    return serve
  }

  /// A name or a list of names under `serve:`, each checked by `check`.
  private func decodeNames(_ node: YAMLNode, key: String, check: (String) -> String?) throws -> [String] {
    let items: [YAMLNode]
    switch node.content {
    case .sequence(let elements): items = elements
    case .scalar: items = [node]
    default:
      throw error(
        "'\(key)' in 'serve' must be a list, such as [\(key == "cors" ? "https://app.example.com" : "folio.example.com")]",
        at: node)
    }
    return try items.map { item in
      guard let text = item.text else {
        throw error("'\(key)' in 'serve' lists names; found \(item.typeDescription)", at: item)
      }
      if let problem = check(text) { throw error("'\(key)' in 'serve': \(problem)", at: item) }
      return text
    }
  }

  // MARK: - Version

  private func checkVersion(_ node: YAMLNode) throws {
    switch node.content {
    case .scalar(_, .integer(Self.supportedVersion)):
      return
    case .scalar(_, .integer(let version)):
      throw error(
        "unsupported version \(version); this Folio reads version \(Self.supportedVersion)",
        at: node)
    case .scalar(_, .null):
      throw error("missing 'version'; \(file) must start with 'version: 1'", at: node)
    case .scalar(let text, .string):
      throw error(
        "'version' must be the integer 1, not the string \"\(text)\"; remove the quotes",
        at: node)
    case .scalar(let text, .plain):
      throw error("'version' must be the integer 1; found '\(text)'", at: node)
    case .sequence, .mapping:
      throw error("'version' must be the integer 1; found \(node.typeDescription)", at: node)
    }
  }

  // MARK: - Tables

  /// What a table's paths were checked against, to find clashes between
  /// tables in one pass: each folder, and every folder above one.
  private struct PathIndex {
    /// Table folder -> index of the table that owns it.
    var folders: [String: Int] = [:]
    /// Folder -> index of a table whose folder lies strictly inside it.
    var ancestors: [String: Int] = [:]
  }

  private func decodeTables(_ node: YAMLNode) throws -> [TableConfig] {
    if node.isNull { return [] }
    guard case .mapping(let pairs) = node.content else {
      throw error(
        "'tables' must be a mapping from table names to their settings; "
          + "found \(node.typeDescription)", at: node)
    }
    var tables: [TableConfig] = []
    var index = PathIndex()
    var formers: [(name: String, table: String, node: YAMLNode)] = []
    for pair in pairs {
      let (table, pathNode, formerNodes) = try decodeTable(nameNode: pair.key, body: pair.value)
      try checkOverlap(table, at: pathNode, with: tables, &index)
      tables.append(table)
      formers += zip(table.renamedFrom, formerNodes).map { ($0, table.name, $1) }
    }
    // A former name stands for one table: ops recorded under it are
    // replayed for that table alone.
    var claimed: [String: String] = [:]
    for former in formers {
      if tables.contains(where: { $0.name == former.name }) {
        throw error(
          "'\(former.name)' in 'renamed-from' of table '\(former.table)' is the name of a table",
          at: former.node)
      }
      if let other = claimed.updateValue(former.table, forKey: former.name), other != former.table {
        throw error(
          "'\(former.name)' is in 'renamed-from' of both table '\(other)' and table '\(former.table)'",
          at: former.node)
      }
    }
    return tables
  }

  /// A table's settings as read, with the nodes errors point at.
  private struct TableSettings {
    var path: String
    var pathNode: YAMLNode
    var key: String? = "id"
    var order: [String] = []
    var indexes: [(path: String, node: YAMLNode)] = []
    var columns: [String: ColumnKind] = [:]
    var columnNodes: [String: YAMLNode] = [:]
    var schemaNode: YAMLNode?
    var fields: [String] = []
    var renamedFrom: [(path: String, node: YAMLNode)] = []
    var layout = TableLayout.flat
  }

  /// Decodes one table. Also returns the node to blame for its path: the
  /// `path` value, or the table's name when the path defaults to it.
  private func decodeTable(nameNode: YAMLNode, body: YAMLNode) throws -> (TableConfig, YAMLNode, [YAMLNode]) {
    let name = nameNode.keyText
    try checkTableName(name, at: nameNode)
    var settings = TableSettings(path: name, pathNode: nameNode)
    // `todos:` with nothing under it is a table with every default.
    if !body.isNull {
      guard case .mapping(let pairs) = body.content else {
        throw error(
          "table '\(name)' must be a mapping of settings (\(Self.tableKeys.joined(separator: ", "))); "
            + "found \(body.typeDescription)", at: body)
      }
      for pair in pairs { try decodeSetting(pair.key, pair.value, table: name, into: &settings) }
    }

    // The key column holds the pk, which is also the file name: counting it
    // or merging it as a set would make the document disagree with its name.
    if let key = settings.key, let node = settings.columnNodes[key] {
      throw error(
        "column '\(key)' is the key of table '\(name)' and always a register; remove its kind",
        at: node)
    }
    // An order key has its index already; listing it again would suggest
    // a second one.
    if let twin = settings.indexes.first(where: { settings.order.contains($0.path) }) {
      throw error(
        "index path '\(twin.path)' of table '\(name)' is an order key, which is indexed already; "
          + "remove it from 'indexes'", at: twin.node)
    }
    return (try makeTable(settings, name: name), settings.pathNode, settings.renamedFrom.map(\.node))
  }

  /// Reads one setting of table `name` into `settings`.
  private func decodeSetting(
    _ keyNode: YAMLNode, _ value: YAMLNode, table name: String, into settings: inout TableSettings
  )
    throws
  {
    switch keyNode.keyText {
    case "path":
      if value.isNull { return }
      guard let text = value.text else {
        throw error("'path' of table '\(name)' must be a string; found \(value.typeDescription)", at: value)
      }
      (settings.path, settings.pathNode) = (text, value)
    case "key":
      // `key: null` keeps the pk in the file name only, as Firebase
      // keeps a key in the path.
      if value.isNull {
        settings.key = nil
        return
      }
      guard let text = value.text else {
        throw error(
          "'key' of table '\(name)' must be a string, or null to keep the pk in the file name only; "
            + "found \(value.typeDescription)",
          at: value)
      }
      if text.isEmpty { throw error("'key' of table '\(name)' must not be empty", at: value) }
      settings.key = text
    case "order":
      settings.order = try decodePaths(value, table: name, setting: "order", noun: "order key").map(\.path)
    case "indexes":
      settings.indexes = try decodePaths(value, table: name, setting: "indexes", noun: "index path")
    case "columns":
      (settings.columns, settings.columnNodes) = try decodeColumns(value, table: name)
    case "schema":
      if !value.isNull { settings.schemaNode = value }
    case "fields":
      settings.fields = try decodeFields(value, table: name)
    case "layout":
      guard let text = value.text, let chosen = TableLayout(rawValue: text) else {
        throw error(
          "'layout' of table '\(name)' must be flat, hashed or nested; found \(value.text.map { "'\($0)'" } ?? value.typeDescription)",
          at: value)
      }
      settings.layout = chosen
    case "renamed-from":
      settings.renamedFrom = try decodePaths(value, table: name, setting: "renamed-from", noun: "former name")
      for former in settings.renamedFrom {
        try checkTableName(former.path, at: former.node)
        if former.path == name {
          throw error("table '\(name)' lists its own name in 'renamed-from'", at: former.node)
        }
      }
    default:
      throw unknownKey(keyNode, expected: Self.tableKeys, table: name)
    }
  }

  /// The table `settings` describe, its path checked and its schema read.
  private func makeTable(_ settings: TableSettings, name: String) throws -> TableConfig {
    let normalized = try checkPath(settings.path, at: settings.pathNode, table: name)
    var table = TableConfig(
      name: name, path: normalized, key: settings.key, order: settings.order,
      indexes: settings.indexes.map(\.path), columns: settings.columns, layout: settings.layout)
    table.fields = settings.fields
    table.renamedFrom = settings.renamedFrom.map(\.path)
    if let schemaNode = settings.schemaNode {
      table.schemaFile = try checkSchemaPath(schemaNode, table: name)
      if let root {
        table.schema = try loadSchema(table.schemaFile!, root: root, at: schemaNode, table: name)
        table.schemaMissing = table.schema == nil
        try checkColumnKinds(table, nodes: settings.columnNodes)
      }
    }
    return table
  }

  /// Table names double as default folder names and appear on the command
  /// line, so they keep to characters that are safe everywhere; a leading
  /// `.` would hide the folder and a leading `-` reads as an option.
  private func checkTableName(_ name: String, at node: YAMLNode) throws {
    if name.isEmpty {
      throw error("table name must not be empty", at: node)
    }
    let allowed = name.unicodeScalars.allSatisfy { scalar in
      switch scalar {
      case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ".": return true
      default: return false
      }
    }
    if !allowed || name.hasPrefix(".") || name.hasPrefix("-") {
      throw error(
        "invalid table name '\(name)': use letters, digits, '_', '-' and '.', "
          + "and do not start with '.' or '-'", at: node)
    }
  }

  /// Decodes a list of paths (`order:` or `indexes:`), each with the node
  /// that names it.
  /// - Parameters:
  ///   - setting: the key, for messages.
  ///   - noun: what one entry is called, for messages.
  private func decodePaths(_ node: YAMLNode, table: String, setting: String, noun: String) throws
    -> [(path: String, node: YAMLNode)]
  {
    if node.isNull { return [] }
    guard case .sequence(let items) = node.content else {
      throw error(
        "'\(setting)' of table '\(table)' must be a list of strings; found \(node.typeDescription)",
        at: node)
    }
    var paths: [(path: String, node: YAMLNode)] = []
    var seen: Set<String> = []
    for item in items {
      guard case .scalar = item.content else {
        throw error(
          "'\(setting)' of table '\(table)' must be a list of strings; found \(item.typeDescription) in it",
          at: item)
      }
      guard let entry = item.text, !entry.isEmpty else {
        throw error("\(noun) of table '\(table)' must not be empty", at: item)
      }
      // A dotted path names a value inside a column; an empty segment names
      // nothing and is almost surely a typo.
      if entry.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
        throw error(
          "\(noun) '\(entry)' of table '\(table)' has an empty segment between dots", at: item)
      }
      guard seen.insert(entry).inserted else {
        throw error("\(noun) '\(entry)' of table '\(table)' is listed twice", at: item)
      }
      paths.append((entry, item))
    }
    return paths
  }

  /// Decodes `fields:`, a list of column names in file order. Unlike
  /// `order:`, an entry is a whole column name, dots included.
  private func decodeFields(_ node: YAMLNode, table: String) throws -> [String] {
    if node.isNull { return [] }
    guard case .sequence(let items) = node.content else {
      throw error(
        "'fields' of table '\(table)' must be a list of strings; found \(node.typeDescription)", at: node)
    }
    var fields: [String] = []
    // By bytes: "caf\u{E9}" and "cafe\u{301}" are two columns (issue 13).
    var seen: Set<[UInt8]> = []
    for item in items {
      guard case .scalar = item.content, let name = item.text else {
        throw error(
          "'fields' of table '\(table)' must be a list of strings; found \(item.typeDescription) in it",
          at: item)
      }
      guard !name.isEmpty else { throw error("field of table '\(table)' must not be empty", at: item) }
      guard seen.insert(Array(name.utf8)).inserted else {
        throw error("field '\(name)' of table '\(table)' is listed twice", at: item)
      }
      fields.append(name)
    }
    return fields
  }

  private func decodeColumns(_ node: YAMLNode, table: String) throws
    -> ([String: ColumnKind], [String: YAMLNode])
  {
    if node.isNull { return ([:], [:]) }
    guard case .mapping(let pairs) = node.content else {
      throw error(
        "'columns' of table '\(table)' must be a mapping from column names to kinds; "
          + "found \(node.typeDescription)", at: node)
    }
    let expected = "expected counter, set or register"
    var columns: [String: ColumnKind] = [:]
    var nodes: [String: YAMLNode] = [:]
    for pair in pairs {
      let column = pair.key.keyText
      if column.isEmpty {
        throw error("column name in table '\(table)' must not be empty", at: pair.key)
      }
      // `views: ~` lists the column without a kind: the default, a register.
      if pair.value.isNull { continue }
      guard let text = pair.value.text else {
        throw error(
          "column kind for '\(column)' must be a string; \(expected)", at: pair.value)
      }
      guard let kind = ColumnKind(rawValue: text) else {
        throw error("unknown column kind '\(text)' for '\(column)'; \(expected)", at: pair.value)
      }
      columns[column] = kind
      nodes[column] = pair.key
    }
    return (columns, nodes)
  }

  // MARK: - Paths

  /// Checks a table's folder and returns it normalised.
  ///
  /// A table folder must stay inside the store and away from what git and
  /// Folio keep there, or writing a document could overwrite the repository,
  /// the op log, or a file outside the checkout.
  private func checkPath(_ raw: String, at node: YAMLNode, table: String) throws -> String {
    let subject = "path '\(raw)' of table '\(table)'"
    if raw.isEmpty {
      throw error("path of table '\(table)' must not be empty", at: node)
    }
    if raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      throw error("path of table '\(table)' contains a control character", at: node)
    }
    if raw.hasPrefix("/") {
      throw error("\(subject) must be relative to the store root, not absolute", at: node)
    }
    let normalized = TableConfig.normalizedPath(raw)
    let segments = normalized.split(separator: "/")
    if segments.contains("..") {
      var depth = 0
      for segment in segments {
        depth += segment == ".." ? -1 : 1
        if depth < 0 {
          throw error("\(subject) leaves the store", at: node)
        }
      }
      throw error("\(subject) must not contain '..' segments", at: node)
    }
    guard let first = segments.first else {
      throw error("\(subject) names the store root; give the table its own folder", at: node)
    }
    // Compared without case: on a case-insensitive disk `.GIT` is `.git`.
    if segments.contains(where: { $0.lowercased() == ".git" }) {
      throw error("\(subject) points into a .git folder", at: node)
    }
    if first.lowercased() == ".folio" {
      throw error("\(subject) points into .folio, where Folio keeps its op logs", at: node)
    }
    if first.lowercased() == Config.fileName {
      throw error("\(subject) collides with the config file \(Config.fileName)", at: node)
    }
    return normalized
  }

  /// Rejects a table whose folder equals, contains or lies inside another
  /// table's folder: a document file would then belong to two tables.
  private func checkOverlap(
    _ table: TableConfig, at node: YAMLNode, with earlier: [TableConfig], _ index: inout PathIndex
  ) throws {
    let path = table.path
    if let other = index.folders[path] {
      throw error(
        "table '\(table.name)' has the same path '\(path)' as table '\(earlier[other].name)'",
        at: node)
    }
    if let other = index.ancestors[path] {
      throw error(
        "path '\(path)' of table '\(table.name)' contains '\(earlier[other].path)', "
          + "the folder of table '\(earlier[other].name)'", at: node)
    }
    let ancestors = Self.ancestors(of: path)
    for ancestor in ancestors {
      if let other = index.folders[ancestor] {
        throw error(
          "path '\(path)' of table '\(table.name)' is inside '\(ancestor)', "
            + "the folder of table '\(earlier[other].name)'", at: node)
      }
    }
    index.folders[path] = earlier.count
    for ancestor in ancestors where index.ancestors[ancestor] == nil {
      index.ancestors[ancestor] = earlier.count
    }
  }

  /// The folders strictly above a normalised path: `a/b/c` -> `a`, `a/b`.
  private static func ancestors(of path: String) -> [String] {
    var result: [String] = []
    var index = path.startIndex
    while let slash = path[index...].firstIndex(of: "/") {
      result.append(String(path[..<slash]))
      index = path.index(after: slash)
    }
    return result
  }

  // MARK: - Errors

  private func unknownKey(_ key: YAMLNode, expected: [String], table: String? = nil) -> FolioError {
    let place = table.map { " in table '\($0)'" } ?? ""
    return error(
      "unknown key '\(key.keyText)'\(place); expected one of: \(expected.joined(separator: ", "))",
      at: key)
  }

  func error(_ message: String, at node: YAMLNode) -> FolioError {
    FolioError(
      .invalidConfig, message, location: .init(file: file, line: node.line, column: node.column))
  }
}
