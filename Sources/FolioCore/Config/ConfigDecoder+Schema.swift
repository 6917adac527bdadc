import FolioSystem
import Glibc

extension ConfigDecoder {
  /// Checks a table's `schema:` value and returns it normalised: a file
  /// inside the store, outside `.git`, as table paths are.
  func checkSchemaPath(_ node: YAMLNode, table: String) throws -> String {
    guard let raw = node.text, !raw.isEmpty else {
      throw error(
        "'schema' of table '\(table)' must be the path of a JSON Schema file, such as schemas/\(table).schema.json",
        at: node)
    }
    let subject = "schema '\(raw)' of table '\(table)'"
    if raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      throw error("\(subject) contains a control character", at: node)
    }
    if raw.hasPrefix("/") {
      throw error("\(subject) must be relative to the store root, not absolute", at: node)
    }
    let normalized = TableConfig.normalizedPath(raw)
    let segments = normalized.split(separator: "/")
    if segments.isEmpty || segments.contains("..") {
      throw error("\(subject) must name a file inside the store, without '..'", at: node)
    }
    if segments.contains(where: { $0.lowercased() == ".git" }) {
      throw error("\(subject) points into a .git folder", at: node)
    }
    return normalized
  }

  /// Reads and compiles a table's schema file. It is read below the store
  /// root without following links (a fetched tree may hold anything), and
  /// its own errors point into it (`schemas/todos.schema.json:5:7`).
  /// - Returns: nil when the file does not exist (see
  ///   ``TableConfig/schemaMissing``).
  func loadSchema(_ path: String, root: String, at node: YAMLNode, table: String) throws -> JSONSchema? {
    let (directory, name) = FileSystem.split(path)
    var bytes: [UInt8]?
    do {
      if let dirfd = try FileSystem.openDirectory(directory, under: root, create: false) {
        defer { close(dirfd) }
        if let fd = try FileSystem.openForReading(in: dirfd, name: name, path: path) {
          defer { close(fd) }
          var st = stat()
          guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw error("schema '\(path)' of table '\(table)' is not a file", at: node)
          }
          guard Int(st.st_size) <= JSONSchema.maximumFileBytes else {
            throw error(
              "schema '\(path)' of table '\(table)' is larger than \(JSONSchema.maximumFileBytes >> 20) MiB",
              at: node)
          }
          bytes = try FileSystem.readAll(fd, path: path)
        }
      }
    } catch let failure as FolioError where failure.location == nil {
      throw error("cannot read schema '\(path)' of table '\(table)': \(failure.message)", at: node)
    }
    guard let bytes else { return nil }
    return try JSONSchema(bytes: bytes, file: path)
  }

  /// A counter column must be able to hold an integer and a set column an
  /// array, or every increment or union would be refused: the column kinds
  /// and the schema contradict each other, which is a config error.
  func checkColumnKinds(_ table: TableConfig, nodes: [String: YAMLNode]) throws {
    guard let schema = table.schema else { return }
    for (column, kind) in table.columns.sorted(by: { $0.key < $1.key }) {
      let (needed, noun): (JSONSchema.Types, String)
      switch kind {
      case .counter: (needed, noun) = (.integer, "integer")
      case .set: (needed, noun) = (.array, "array")
      case .register: continue
      }
      let (allowed, location) = schema.allowedTypes(ofProperty: column)
      guard !allowed.isSuperset(of: needed) else { continue }
      let hint =
        kind == .counter
        ? "; allow \"integer\" (and \"string\", if it may pass 32 bits: a counter past 2147483647 is stored as a decimal string)"
        : "; allow \"array\""
      throw error(
        "column '\(column)' of table '\(table.name)' is a \(kind.rawValue), but its schema (\(location)) allows no \(noun)"
          + hint, at: nodes[column]!)
    }
  }
}
