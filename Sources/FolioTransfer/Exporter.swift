import FolioCore
import FolioGit
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Writes a query's documents out as NDJSON, JSON, CSV, TSV or SQLite,
/// streamed: the columns (given, or gathered in a first pass), each row
/// reshaped to them, and the output file, written whole or not at all.
/// ``Store``'s `exportRows` methods hand their calls here.
struct Exporter {
  let store: Store

  /// Writes what `query` returns (at `snapshot`, or in the working tree).
  func export(
    _ query: Query, snapshot: StoreSnapshot?, options: ExportOptions, onProgress: (Int, Int?) -> Void
  ) throws -> ExportSummary {
    let table = try store.table(named: query.collection.name)
    if let given = options.pkColumn, let key = table.key, given != key {
      throw FolioError(
        .usage,
        "table '\(table.name)' carries its pk in its key column '\(key)'; --pk names the pk column only for "
          + "a table that keeps its pk in the file name (key: null)", table: table.name)
    }
    let rows = ExportRows(query: query, snapshot: snapshot, table: table, options: options)
    let layout = try layout(of: rows, table: table, snapshot: snapshot, options: options)
    let output = try ExportOutput(options: options)
    var summary = ExportSummary()
    do {
      let writer = try output.writer(for: layout, table: table, options: options)
      // Known without reading a document only on an index and without a filter.
      let total = snapshot == nil && query.isIndexed(table) && query.filter == nil ? try query.count() : nil
      try rows.read { document in
        try writer.write(layout.reshape(document))
        summary.rows += 1
        if summary.rows % 512 == 0 { onProgress(summary.rows, total) }
      }
      try writer.finish()
      try output.finish()
    } catch {
      output.abandon()
      throw error
    }
    onProgress(summary.rows, summary.rows)
    summary.skipped = rows.skipped
    return summary
  }

  /// The columns an export writes, and what each row is turned into.
  private func layout(
    of rows: ExportRows, table: TableConfig, snapshot: StoreSnapshot?, options: ExportOptions
  ) throws -> ExportLayout {
    // A table that keeps its pk in the file name gets it back in each row,
    // so the rows can be imported again.
    let key = table.rowKey(options.pkColumn)
    let given = options.columnPaths ?? options.columns?.map { FieldPath.column($0) }
    if let given {
      try checkColumnsExist(given, table: table, snapshot: snapshot, pkColumn: options.pkColumn)
    }
    var columns = given?.map { $0.segments.joined(separator: ".") }
    // Column names by their bytes: twin keys are two columns (issue 13).
    var types: [ExactKey: SQLiteExportWriter.ColumnType?] = [:]
    if options.format == .sqlite || (columns == nil && (options.format == .csv || options.format == .tsv)) {
      var seen = Set<ExactKey>()
      try rows.read { document in
        for (key, value) in document {
          let exact = ExactKey(key)
          seen.insert(exact)
          types[exact] = SQLiteExportWriter.widen(types[exact] ?? nil, SQLiteExportWriter.type(of: value))
        }
      }
      if columns == nil {
        columns = Self.defaultColumns(
          seen: seen, fields: table.fields, key: key, includeKey: options.includeKey)
      }
    }
    // A table without its pk could not be imported back or keyed in SQL.
    var paths = given ?? (columns ?? []).map { FieldPath.column($0) }
    if options.format == .sqlite, let given = columns, !given.contains(key) {
      columns = [key] + given
      paths = [.column(key)] + paths
    }
    return ExportLayout(
      key: key, columns: columns ?? [], paths: paths, types: types,
      // Nested paths are read into a flat row headed by the column names.
      reshapes: paths.contains { $0.segments.count > 1 }
        || ((options.format == .ndjson || options.format == .json) && given != nil))
  }

  /// The CSV/TSV columns when none are given. With the table's `fields`
  /// (the order of the file it was imported from): those, then the other
  /// columns seen, by name; the key column goes first only when asked and
  /// the fields leave it out (its pks were generated). Without `fields`:
  /// the key column, then the rest by name.
  static func defaultColumns(seen: Set<ExactKey>, fields: [String], key: String, includeKey: Bool) -> [String]
  {
    guard !fields.isEmpty else { return [key] + seen.subtracting([ExactKey(key)]).sorted().map(\.string) }
    let listed = Set(fields.map { ExactKey($0) })
    let rest = seen.subtracting(listed).subtracting([ExactKey(key)]).sorted().map(\.string)
    let keyFirst = includeKey && !listed.contains(ExactKey(key)) ? [key] : []
    return keyFirst + fields + rest
  }

  /// Throws, naming the nearest field that exists, when a path in `columns`
  /// is in no document of the table (an empty table passes). Reading stops
  /// once every path is found, which is mostly the first document.
  private func checkColumnsExist(
    _ columns: [FieldPath], table: TableConfig, snapshot: StoreSnapshot?, pkColumn: String?
  ) throws {
    var missing = Set(columns)
    var known = Set<FieldPath>()
    let whole = store.collection(table.name).query()
    var cursor = try snapshot?.documents(whole) ?? whole.documents()
    while !missing.isEmpty, let document = try cursor.next() {
      let row = try table.row(document.value, pk: document.pk, column: pkColumn)
      missing = missing.filter { row.value(at: $0) == nil }
      if !missing.isEmpty { Self.collectPaths(of: row, under: [], into: &known) }
    }
    // An empty table has no fields to check against: its export is a header.
    guard let first = columns.first(where: missing.contains), !known.isEmpty else { return }
    let typed = first.segments.joined(separator: ".")
    let nearest = known.map { ($0.segments.joined(separator: "."), $0) }
      .min { a, b in
        let (da, db) = (Config.editDistance(typed, a.0), Config.editDistance(typed, b.0))
        return da < db || (da == db && a.0 < b.0)
      }
    var message = "no document of table '\(table.name)' has the field '\(typed)' named in the columns"
    if let nearest {
      message += "; did you mean \(Self.typedForm(nearest.1))?"
    }
    throw FolioError(.usage, message, table: table.name)
  }

  /// Every path in `object`, objects followed down a few levels.
  private static func collectPaths(
    of object: JSONObject, under prefix: [String], into paths: inout Set<FieldPath>
  ) {
    for (key, value) in object {
      let segments = prefix + [key]
      paths.insert(FieldPath(segments))
      if case .object(let inner) = value, segments.count < 4 {
        collectPaths(of: inner, under: segments, into: &paths)
      }
    }
  }

  /// A path as it would be typed in `--columns`: segments with a `.`,
  /// space, comma or backtick in backticks.
  static func typedForm(_ path: FieldPath) -> String {
    path.segments.map { segment in
      segment.contains(where: { ".` ,".contains($0) }) ? "`" + segment + "`" : segment
    }.joined(separator: ".")
  }
}

/// What an export reads: the query's rows, as the table writes them back
/// (its pk in the key column), with the files that did not parse gathered
/// over every pass.
private final class ExportRows {
  let query: Query
  let snapshot: StoreSnapshot?
  let table: TableConfig
  let options: ExportOptions
  private(set) var skipped: [FolioError] = []

  init(query: Query, snapshot: StoreSnapshot?, table: TableConfig, options: ExportOptions) {
    self.query = query
    self.snapshot = snapshot
    self.table = table
    self.options = options
  }

  /// Calls `body` with each row, in the export's order.
  func read(_ body: (JSONObject) throws -> Void) throws {
    var cursor = try snapshot?.documents(query) ?? query.documents()
    if options.descending { try cursor.reverse() }
    while let document = try cursor.next() {
      try body(try table.row(document.value, pk: document.pk, column: options.pkColumn))
    }
    // A first pass for the columns meets the same files again.
    for error in cursor.skipped where !skipped.contains(where: { $0.location == error.location }) {
      skipped.append(error)
    }
  }
}

/// The columns of an export and how a row becomes what is written.
private struct ExportLayout {
  /// The table's key column in a row.
  var key: String
  /// The column names, in order (CSV, TSV and SQLite; NDJSON and JSON only
  /// when projected).
  var columns: [String]
  /// The path each column reads.
  var paths: [FieldPath]
  /// Each column's SQLite type, by name.
  var types: [ExactKey: SQLiteExportWriter.ColumnType?]
  /// Whether a row is cut down to the columns (a projection, or nested
  /// paths read into flat columns) rather than written whole.
  var reshapes: Bool

  func reshape(_ row: JSONObject) -> JSONObject {
    guard reshapes else { return row }
    var projected = JSONObject()
    for (column, path) in zip(columns, paths) {
      if let value = row.value(at: path) { projected[column] = value }
    }
    return projected
  }
}

/// Where an export's bytes go: stdout, a descriptor the caller owns, a
/// device written into in place, or a file written under a temporary name
/// and renamed at the end, so that a failed export never leaves a half
/// file under the real name. SQLite writes its own file.
private final class ExportOutput {
  private let options: ExportOptions
  private var fd: Int32 = STDOUT_FILENO
  private var temporary: String?

  init(options: ExportOptions) throws {
    self.options = options
    guard options.format != .sqlite else { return }
    if let descriptor = options.outputDescriptor {
      fd = descriptor
    } else if let path = options.outputPath {
      var st = stat()
      if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
        // A device, FIFO or `/dev/stdout`: written into as `cp` does.
        // Renaming over it would replace the node, not feed it.
        fd = try FileSystem.syscall("open", path: path) { open(path, O_WRONLY | O_CLOEXEC) }
      } else {
        // Through a symlink, as `cp` does: the file it names is replaced.
        let target = FileSystem.realPath(path) ?? path
        let temp = FileSystem.temporaryPath(for: target)
        fd = try FileSystem.syscall("open", path: temp) {
          open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        }
        temporary = temp
      }
    }
  }

  /// Whether the descriptor is the export's own, to close.
  private var ownsDescriptor: Bool { fd >= 0 && fd != STDOUT_FILENO && fd != options.outputDescriptor }

  func writer(for layout: ExportLayout, table: TableConfig, options: ExportOptions) throws -> any ExportWriter
  {
    if options.format == .sqlite {
      guard let path = options.outputPath else {
        throw FolioError(.usage, "SQLite output needs a file: give -o FILE")
      }
      return try SQLiteExportWriter(
        path: path, table: options.sqliteTable ?? table.name,
        columns: layout.columns.map { ($0, layout.types[ExactKey($0)] ?? nil) }, pk: layout.key,
        indexes: table.indexedPaths)
    }
    let sink = ByteSink(fd: fd, name: options.outputPath ?? "<stdout>")
    switch options.format {
    case .ndjson: return NDJSONExportWriter(sink: sink)
    case .json: return JSONArrayExportWriter(sink: sink)
    case .csv, .tsv:
      return try CSVExportWriter(
        sink: sink, columns: layout.columns, separator: options.format == .csv ? UInt8(ascii: ",") : 0x09,
        nullValues: options.nullValues, crlf: options.crlf)
    case .sqlite: fatalError("handled above")
    }
  }

  /// Closes the file the export opened and gives it its real name.
  func finish() throws {
    if ownsDescriptor {
      close(fd)
      fd = -1
    }
    if let temporary, let path = options.outputPath {
      let target = FileSystem.realPath(path) ?? path
      try FileSystem.syscall("rename", path: path) { rename(temporary, target) }
      self.temporary = nil
    }
  }

  /// Closes and removes what a failed export wrote.
  func abandon() {
    if ownsDescriptor { close(fd) }
    fd = -1
    if let temporary { unlink(temporary) }
  }
}
