import FolioJSON
import FolioSystem

/// What a reader hands the importer: a row with the line it starts on, or a
/// bad row that the importer reports and, with `--continue`, skips.
enum RowEvent {
  case row(JSONValue, line: Int)
  /// A member of a JSON object keyed by pk (`{"id1": {...}}`): its key is
  /// the row's pk.
  case keyedRow(key: String, JSONValue, line: Int)
  case bad(FolioError)
}

/// A streaming source of rows. Errors it throws end the import; bad rows it
/// returns as ``RowEvent/bad(_:)`` can be skipped.
protocol RowReader: AnyObject {
  /// The input's name, for messages.
  var name: String { get }
  /// The next row, or nil at the end.
  func next() throws -> RowEvent?
  /// Bytes read so far and the total, for progress (nil when unknown).
  var progress: (done: Int, total: Int?) { get }
  /// The columns a header row names, in the file's order (CSV/TSV), for
  /// ``TableConfig/fields``; nil for formats without a header.
  var headerColumns: [String]? { get }
}

extension RowReader {
  var headerColumns: [String]? { nil }
}
