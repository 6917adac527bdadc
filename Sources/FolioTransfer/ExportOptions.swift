import FolioCore
import FolioSystem

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
