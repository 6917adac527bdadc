import FolioCore
import FolioGit
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Options for ``Store/exportRows(_:options:onProgress:)-52wgj``: the format and
/// the destination. Which rows, and in what order, is the query's business.
public struct ExportOptions: Sendable {
  /// The format (default NDJSON).
  public var format: TransferFormat = .ndjson
  /// The output file; nil for stdout (not for SQLite).
  public var outputPath: String?
  /// For SQLite: the table to create or replace (default: the Folio table's name).
  public var sqliteTable: String?
  /// The columns, in order (CSV/TSV/SQLite; for NDJSON/JSON, a projection),
  /// each a top-level column name taken whole. SQLite output always has the
  /// table's key column as its primary key: if `columns` leaves it out, it
  /// is added first. See ``columnPaths`` for nested values.
  public var columns: [String]?
  /// The columns as paths, which take precedence over ``columns``: a path
  /// of several segments names a nested value, whose column is headed by
  /// the segments joined with `.`. Parse what a person typed with
  /// `FieldPath.list(parsing:)`, where a name with a space or a dot goes
  /// between backticks.
  ///
  /// Every column given here or in ``columns`` must be in some document of
  /// the table (unless it has none): one that none has is a `USAGE` error
  /// naming the nearest that exists.
  public var columnPaths: [FieldPath]?
  /// CSV/TSV: the text of a null (and of a missing value); default empty.
  /// A string equal to any of them is quoted, so an import with the same
  /// ``ImportOptions/nullValues`` reads it back as a string.
  public var nullValues: [String] = []
  /// CSV/TSV: end records with CRLF instead of LF.
  public var crlf = false
  /// CSV/TSV with the table's ``TableConfig/fields`` known: also write the
  /// key column, first, when the fields leave it out (its pks were
  /// generated on import). A key column the fields list stays in its place.
  public var includeKey = false
  /// For a table that keeps its pk in the file name only (`key: null`): the
  /// column that carries the pk in each row; nil for
  /// ``TableConfig/nameKeyColumn``. A table with a key column
  /// carries it in that column.
  public var pkColumn: String?
  /// An open file to write into, in place of ``outputPath`` and stdout
  /// (not for SQLite); the export neither closes nor renames it. How
  /// `folio serve` hands an export to its client.
  package var outputDescriptor: Int32?
  /// The rows last first: the query's order reversed, read in step.
  package var descending = false

  /// Default options: NDJSON to stdout.
  public init() {}
}

/// What an export wrote.
public struct ExportSummary: Sendable {
  /// Rows written.
  public var rows = 0
  /// The document files left out because they do not parse, each an error
  /// at its `file:line:col` (see ``QueryCursor/skipped``); the other rows
  /// are written as if they were not there.
  public var skipped: [FolioError] = []
}

extension Store {
  /// Writes a table's documents out, streamed, in order: by the table's
  /// first order key, else by pk. Shorthand for ``exportRows(_:options:onProgress:)-52wgj``
  /// with the table's plain query.
  @discardableResult
  public func exportRows(
    from tableName: String, options: ExportOptions, onProgress: (Int, Int?) -> Void = { _, _ in }
  ) throws -> ExportSummary {
    try exportRows(collection(tableName).query(), options: options, onProgress: onProgress)
  }

  /// Writes the documents `query` returns, streamed, in the query's order
  /// (by default the table's first order key, else the pk), with its range,
  /// limit and filter applied.
  ///
  /// ```swift
  /// var options = ExportOptions()
  /// options.format = .csv
  /// options.outputPath = "late.csv"
  /// let late = try store.collection("flights").query()
  ///     .orderBy(child: "dep_delay").startAt(60).where("carrier == \"AA\"")
  /// try store.exportRows(late, options: options)
  /// ```
  ///
  /// Documents are read one at a time through the query's cursor, so memory
  /// stays flat however large the table. CSV/TSV take their columns from
  /// `columns`, or from the union of the columns seen (key column first,
  /// then by name), which costs one more pass of the query. SQLite output
  /// also takes one more pass, to give each column a type. Types that change
  /// on a round trip: CSV/TSV bring nested values back as JSON-text strings;
  /// SQLite turns booleans into 0/1, nested values into JSON text and
  /// decimals into REALs.
  /// - Parameter onProgress: rows written, and the total when it is known
  ///   without reading documents.
  /// - Throws: `UNKNOWN_TABLE`, `INVALID_JSON` for a document that does not
  ///   parse, I/O and SQLite errors. A failed export leaves no file behind.
  @discardableResult
  public func exportRows(
    _ query: Query, options: ExportOptions, onProgress: (Int, Int?) -> Void = { _, _ in }
  ) throws -> ExportSummary {
    try exportRows(query, snapshot: nil, options: options, onProgress: onProgress)
  }

  /// Writes what `query` returns at a past commit (``StoreSnapshot``) to a
  /// file or stdout, as ``exportRows(_:options:onProgress:)-52wgj`` does
  /// for the working tree. The documents are read from git's objects; the
  /// total is not known ahead.
  @discardableResult
  public func exportRows(
    _ query: Query, asOf snapshot: StoreSnapshot, options: ExportOptions,
    onProgress: (Int, Int?) -> Void = { _, _ in }
  ) throws -> ExportSummary {
    try exportRows(query, snapshot: snapshot, options: options, onProgress: onProgress)
  }

  private func exportRows(
    _ query: Query, snapshot: StoreSnapshot?, options: ExportOptions, onProgress: (Int, Int?) -> Void
  ) throws -> ExportSummary {
    let table = try self.table(named: query.collection.name)
    if let given = options.pkColumn, let key = table.key, given != key {
      throw FolioError(
        .usage,
        "table '\(table.name)' carries its pk in its key column '\(key)'; --pk names the pk column only for "
          + "a table that keeps its pk in the file name (key: null)", table: table.name)
    }

    // A table that keeps its pk in the file name gets it back in each row,
    // so the rows can be imported again.
    let key = table.rowKey(options.pkColumn)
    var skipped: [FolioError] = []
    func documents(_ body: (JSONObject) throws -> Void) throws {
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

    let given = options.columnPaths ?? options.columns?.map { FieldPath.column($0) }
    if let given {
      try checkColumnsExist(given, table: table, snapshot: snapshot, pkColumn: options.pkColumn)
    }
    var columns = given?.map { $0.segments.joined(separator: ".") }
    // Column names by their bytes: twin keys are two columns (issue 13).
    var types: [ExactKey: SQLiteExportWriter.ColumnType?] = [:]
    if options.format == .sqlite || (columns == nil && (options.format == .csv || options.format == .tsv)) {
      var seen = Set<ExactKey>()
      try documents { document in
        for (key, value) in document {
          let exact = ExactKey(key)
          seen.insert(exact)
          types[exact] = SQLiteExportWriter.widen(types[exact] ?? nil, SQLiteExportWriter.type(of: value))
        }
      }
      if columns == nil {
        columns = Store.defaultColumns(
          seen: seen, fields: table.fields, key: key, includeKey: options.includeKey)
      }
    }
    // A table without its pk could not be imported back or keyed in SQL.
    var paths = given ?? (columns ?? []).map { FieldPath.column($0) }
    if options.format == .sqlite, let given = columns, !given.contains(key) {
      columns = [key] + given
      paths = [.column(key)] + paths
    }
    // Nested paths are read into a flat row headed by the column names.
    let flatten = paths.contains { $0.segments.count > 1 }

    let writer: any ExportWriter
    var fd: Int32 = STDOUT_FILENO
    var temporary: String?
    if options.format == .sqlite {
      guard let path = options.outputPath else {
        throw FolioError(.usage, "SQLite output needs a file: give -o FILE")
      }
      writer = try SQLiteExportWriter(
        path: path, table: options.sqliteTable ?? table.name,
        columns: columns!.map { ($0, types[ExactKey($0)] ?? nil) }, pk: key, indexes: table.indexedPaths
      )
    } else {
      if let descriptor = options.outputDescriptor {
        fd = descriptor
      } else if let path = options.outputPath {
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
          // A device, FIFO or `/dev/stdout`: written into as `cp` does.
          // Renaming over it would replace the node, not feed it.
          fd = try FileSystem.syscall("open", path: path) { open(path, O_WRONLY | O_CLOEXEC) }
        } else {
          // Written under a temporary name and renamed at the end, so a
          // failed export never leaves a half file under the real name.
          // Through a symlink, as `cp` does: the file it names is replaced.
          let target = FileSystem.realPath(path) ?? path
          let temp = FileSystem.temporaryPath(for: target)
          fd = try FileSystem.syscall("open", path: temp) {
            open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
          }
          temporary = temp
        }
      }
      let sink = ByteSink(fd: fd, name: options.outputPath ?? "<stdout>")
      do {
        switch options.format {
        case .ndjson: writer = NDJSONExportWriter(sink: sink)
        case .json: writer = JSONArrayExportWriter(sink: sink)
        case .csv, .tsv:
          writer = try CSVExportWriter(
            sink: sink, columns: columns!, separator: options.format == .csv ? UInt8(ascii: ",") : 0x09,
            nullValues: options.nullValues, crlf: options.crlf)
        case .sqlite: fatalError("handled above")
        }
      } catch {
        if fd != STDOUT_FILENO && fd != options.outputDescriptor { close(fd) }
        if let temporary { unlink(temporary) }
        throw error
      }
    }
    var summary = ExportSummary()
    do {
      // Known without reading a document only on an index and without a filter.
      let total = snapshot == nil && query.isIndexed(table) && query.filter == nil ? try query.count() : nil
      let project = (options.format == .ndjson || options.format == .json) && given != nil
      try documents { document in
        if project || flatten {
          var projected = JSONObject()
          for (column, path) in zip(columns!, paths) {
            if let value = document.value(at: path) { projected[column] = value }
          }
          try writer.write(projected)
        } else {
          try writer.write(document)
        }
        summary.rows += 1
        if summary.rows % 512 == 0 { onProgress(summary.rows, total) }
      }
      try writer.finish()
      if let temporary, let path = options.outputPath {
        close(fd)
        fd = -1
        let target = FileSystem.realPath(path) ?? path
        try FileSystem.syscall("rename", path: path) { rename(temporary, target) }
      } else if fd != STDOUT_FILENO && fd != options.outputDescriptor {
        close(fd)
        fd = -1
      }
    } catch {
      if fd >= 0 && fd != STDOUT_FILENO && fd != options.outputDescriptor { close(fd) }
      if let temporary { unlink(temporary) }
      throw error
    }
    onProgress(summary.rows, summary.rows)
    summary.skipped = skipped
    return summary
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
    let whole = collection(table.name).query()
    var cursor = try snapshot?.documents(whole) ?? whole.documents()
    while !missing.isEmpty, let document = try cursor.next() {
      let row = try table.row(document.value, pk: document.pk, column: pkColumn)
      missing = missing.filter { row.value(at: $0) == nil }
      if !missing.isEmpty { Store.collectPaths(of: row, under: [], into: &known) }
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
      message += "; did you mean \(Store.typedForm(nearest.1))?"
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
