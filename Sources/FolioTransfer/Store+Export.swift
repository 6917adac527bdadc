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
  /// The columns, in order (CSV/TSV/SQLite; for NDJSON/JSON, a projection).
  /// SQLite output always has the table's key column as its primary key: if
  /// `columns` leaves it out, it is added first.
  public var columns: [String]?
  /// For a table that keeps its pk in the file name only (`key: null`): the
  /// column that carries the pk in each row; nil for
  /// ``TableConfig/nameKeyColumn``. A table with a key column
  /// carries it in that column.
  public var pkColumn: String?

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
      while let document = try cursor.next() {
        try body(try table.row(document.value, pk: document.pk, column: options.pkColumn))
      }
      // A first pass for the columns meets the same files again.
      for error in cursor.skipped where !skipped.contains(where: { $0.location == error.location }) {
        skipped.append(error)
      }
    }

    var columns = options.columns
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
        columns = [key] + seen.subtracting([ExactKey(key)]).sorted().map(\.string)
      }
    }
    // A table without its pk could not be imported back or keyed in SQL.
    if options.format == .sqlite, let given = columns, !given.contains(key) {
      columns = [key] + given
    }

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
      if let path = options.outputPath {
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
            open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
          }
          temporary = temp
        }
      }
      let sink = ByteSink(fd: fd, name: options.outputPath ?? "<stdout>")
      do {
        switch options.format {
        case .ndjson: writer = NDJSONExportWriter(sink: sink)
        case .json: writer = JSONArrayExportWriter(sink: sink)
        case .csv: writer = try CSVExportWriter(sink: sink, columns: columns!, separator: UInt8(ascii: ","))
        case .tsv: writer = try CSVExportWriter(sink: sink, columns: columns!, separator: 0x09)
        case .sqlite: fatalError("handled above")
        }
      } catch {
        if fd != STDOUT_FILENO { close(fd) }
        if let temporary { unlink(temporary) }
        throw error
      }
    }
    var summary = ExportSummary()
    do {
      // Known without reading a document only on an index and without a filter.
      let total = snapshot == nil && query.isIndexed(table) && query.filter == nil ? try query.count() : nil
      let projection = (options.format == .ndjson || options.format == .json) ? options.columns : nil
      try documents { document in
        if let projection {
          var projected = JSONObject()
          for column in projection { if let value = document[column] { projected[column] = value } }
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
      } else if fd != STDOUT_FILENO {
        close(fd)
        fd = -1
      }
    } catch {
      if fd >= 0 && fd != STDOUT_FILENO { close(fd) }
      if let temporary { unlink(temporary) }
      throw error
    }
    onProgress(summary.rows, summary.rows)
    summary.skipped = skipped
    return summary
  }
}
