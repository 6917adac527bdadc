import FolioJSON
import FolioSystem

/// Reads the rows of one SQLite table through libsqlite3. Each row becomes
/// an object keyed by column name; a row's "line" in messages is its ordinal.
final class SQLiteReader: RowReader {
  private let database: SQLiteDatabase
  private let statement: SQLiteStatement
  private let columns: [String]
  private let total: Int
  private var row = 0
  let name: String

  init(path: String, table: String?) throws {
    let database = try SQLiteDatabase(path: path, create: false)
    self.database = database
    let tables = try database.tableNames()
    let chosen: String
    if let table {
      guard tables.contains(table) else {
        throw FolioError(
          .notFound,
          "no table '\(table)' in the SQLite database"
            + (tables.isEmpty ? "" : "; tables are: " + tables.joined(separator: ", ")), path: path)
      }
      chosen = table
    } else if tables.count == 1 {
      chosen = tables[0]
    } else {
      throw FolioError(
        .usage,
        "the SQLite database has \(tables.count) tables; name one with --sqlite-table"
          + (tables.isEmpty ? "" : " (" + tables.joined(separator: ", ") + ")"), path: path)
    }
    let quoted = SQLiteDatabase.quote(chosen)
    let count = try database.prepare("SELECT count(*) FROM \(quoted)")
    total = try count.step() ? Int(count.text(0) ?? "0") ?? 0 : 0
    let statement = try database.prepare("SELECT * FROM \(quoted)")
    self.statement = statement
    columns = (0..<statement.columnCount).map { statement.columnName($0) }
    name = path
  }

  var progress: (done: Int, total: Int?) { (row, total) }

  func next() throws -> RowEvent? {
    guard try statement.step() else { return nil }
    row += 1
    var object = JSONObject()
    for (index, column) in columns.enumerated() {
      guard let value = statement.jsonValue(index) else {
        // The row's "line" is its ordinal, and its "column" the column's.
        return .bad(
          FolioError(
            .invalidDocument,
            "column '\(column)' holds \(statement.nonFiniteReal(index)), which JSON cannot hold; store it as text or NULL",
            location: .init(file: name, line: row, column: index + 1)))
      }
      object[column] = value
    }
    return .row(.object(object), line: row)
  }
}
