import FolioJSON

/// Writes rows into an SQLite table, created or replaced, in one
/// transaction. Column types come from the data: INTEGER when every value is
/// a 64-bit integer (or a boolean), REAL when every value is a number, TEXT
/// when every value is a string or nested (as JSON text), and no declared
/// type for mixed columns, so each value keeps its own type. The pk column is the primary key, and the
/// table's order keys get indexes, so SQL on the result is fast.
final class SQLiteExportWriter: ExportWriter {
  private let database: SQLiteDatabase
  private let insert: SQLiteStatement
  private let columns: [String]

  /// The SQL type a column's values fit.
  enum ColumnType: String {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    /// No declared type (BLOB affinity): each value keeps the type it was
    /// bound with, for columns of mixed types and integers beyond 64 bits.
    case any = ""
  }

  static func type(of value: JSONValue) -> ColumnType? {
    switch value {
    case .null: nil
    case .bool: .integer
    case .number(let text):
      if Int64(text) != nil {
        .integer
      } else if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
        .real
      } else {
        .any
      }
    default: .text
    }
  }

  static func widen(_ a: ColumnType?, _ b: ColumnType?) -> ColumnType? {
    guard let a else { return b }
    guard let b else { return a }
    if a == b { return a }
    if (a == .integer && b == .real) || (a == .real && b == .integer) { return .real }
    return .any
  }

  init(
    path: String, table: String, columns: [(name: String, type: ColumnType?)], pk: String, indexes: [String]
  )
    throws
  {
    database = try SQLiteDatabase(path: path, create: true)
    self.columns = columns.map(\.name)
    let quoted = SQLiteDatabase.quote(table)
    try database.execute("PRAGMA synchronous = OFF")
    try database.execute("BEGIN")
    try database.execute("DROP TABLE IF EXISTS \(quoted)")
    let definitions = columns.map { column in
      SQLiteDatabase.quote(column.name) + ((column.type ?? .any) == .any ? "" : " " + column.type!.rawValue)
        + (column.name == pk ? " PRIMARY KEY" : "")
    }
    try database.execute("CREATE TABLE \(quoted) (\(definitions.joined(separator: ", ")))")
    for column in indexes where self.columns.contains(column) && column != pk {
      try database.execute(
        "CREATE INDEX \(SQLiteDatabase.quote("idx_\(table)_\(column)")) ON \(quoted) (\(SQLiteDatabase.quote(column)))"
      )
    }
    let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
    insert = try database.prepare(
      "INSERT INTO \(quoted) (\(self.columns.map(SQLiteDatabase.quote).joined(separator: ", "))) VALUES (\(placeholders))"
    )
  }

  func write(_ document: JSONObject) throws {
    insert.reset()
    for (index, column) in columns.enumerated() { try insert.bind(document[column], at: index + 1) }
    _ = try insert.step()
  }

  func finish() throws { try database.execute("COMMIT") }
}
