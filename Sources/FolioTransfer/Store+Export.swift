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
    try Exporter(store: self).export(query, snapshot: nil, options: options, onProgress: onProgress)
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
    try Exporter(store: self).export(query, snapshot: snapshot, options: options, onProgress: onProgress)
  }

  /// ``exportRows(from:options:onProgress:)``, run on the store's executor.
  @discardableResult
  public func exportRows(
    from tableName: String, options: ExportOptions,
    onProgress: @escaping @Sendable (Int, Int?) -> Void = { _, _ in }
  ) async throws -> ExportSummary {
    try await perform { try self.exportRows(from: tableName, options: options, onProgress: onProgress) }
  }

  /// ``exportRows(_:options:onProgress:)``, run on the store's executor.
  ///
  /// ```swift
  /// var options = ExportOptions()
  /// options.outputPath = "open.ndjson"
  /// try await store.exportRows(todos.query().where("done == false"), options: options)
  /// ```
  @discardableResult
  public func exportRows(
    _ query: Query, options: ExportOptions, onProgress: @escaping @Sendable (Int, Int?) -> Void = { _, _ in }
  ) async throws -> ExportSummary {
    try await perform { try self.exportRows(query, options: options, onProgress: onProgress) }
  }

}
