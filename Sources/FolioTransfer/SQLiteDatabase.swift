internal import CSQLite
import FolioJSON
import FolioSystem
import Foundation

/// An owned `sqlite3*` connection, closed on deinit.
final class SQLiteDatabase {
  let handle: OpaquePointer
  let path: String

  /// Opens `path`; `create` makes the file if it is missing.
  init(path: String, create: Bool) throws {
    var db: OpaquePointer?
    let flags = create ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) : SQLITE_OPEN_READONLY
    let rc = sqlite3_open_v2(path, &db, flags, nil)
    guard rc == SQLITE_OK, let db else {
      let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
      if let db { sqlite3_close_v2(db) }
      throw FolioError(
        .io, "cannot open the SQLite database: \(message)", path: path, function: "sqlite3_open_v2")
    }
    handle = db
    self.path = path
  }

  deinit { sqlite3_close_v2(handle) }

  /// Throws the connection's last error unless `rc` is one of `ok`.
  func check(_ rc: Int32, _ function: StaticString, ok: Set<Int32> = [SQLITE_OK]) throws {
    if ok.contains(rc) { return }
    throw FolioError(
      .io, "SQLite: " + String(cString: sqlite3_errmsg(handle)), path: path, function: "\(function)")
  }

  /// Runs SQL that returns no rows.
  func execute(_ sql: String) throws {
    try check(sqlite3_exec(handle, sql, nil, nil, nil), "sqlite3_exec")
  }

  /// Prepares one statement.
  func prepare(_ sql: String) throws -> SQLiteStatement {
    var statement: OpaquePointer?
    try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil), "sqlite3_prepare_v2")
    return SQLiteStatement(handle: statement!, database: self)
  }

  /// `name` as an SQL identifier, quoted.
  static func quote(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// The tables in the database.
  func tableNames() throws -> [String] {
    let statement = try prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    var names: [String] = []
    while try statement.step() { names.append(statement.text(0) ?? "") }
    return names
  }
}

/// An owned `sqlite3_stmt*`, finalized on deinit. It keeps its connection
/// alive.
final class SQLiteStatement {
  let handle: OpaquePointer
  let database: SQLiteDatabase

  init(handle: OpaquePointer, database: SQLiteDatabase) {
    self.handle = handle
    self.database = database
  }

  deinit { sqlite3_finalize(handle) }

  /// Steps once; true while there is a row.
  func step() throws -> Bool {
    let rc = sqlite3_step(handle)
    if rc == SQLITE_ROW { return true }
    try database.check(rc, "sqlite3_step", ok: [SQLITE_DONE])
    return false
  }

  /// Resets the statement and its bindings for the next row.
  func reset() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  var columnCount: Int { Int(sqlite3_column_count(handle)) }

  func columnName(_ index: Int) -> String { String(cString: sqlite3_column_name(handle, Int32(index))) }

  func text(_ index: Int) -> String? {
    guard let pointer = sqlite3_column_text(handle, Int32(index)) else { return nil }
    let count = Int(sqlite3_column_bytes(handle, Int32(index)))
    return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
  }

  /// Column `index` of the current row as JSON: integers and reals as
  /// numbers, text as strings, NULL as null, and blobs as base64 strings;
  /// nil for a real JSON cannot hold (`+Inf`, `-Inf`, NaN), which
  /// ``nonFiniteReal(_:)`` names.
  func jsonValue(_ index: Int) -> JSONValue? {
    let column = Int32(index)
    switch sqlite3_column_type(handle, column) {
    case SQLITE_INTEGER: return .number(String(sqlite3_column_int64(handle, column)))
    case SQLITE_FLOAT:
      let value = sqlite3_column_double(handle, column)
      guard value.isFinite else { return nil }
      return .number("\(value)")
    case SQLITE_TEXT: return .string(text(index) ?? "")
    case SQLITE_BLOB:
      let count = Int(sqlite3_column_bytes(handle, column))
      guard let pointer = sqlite3_column_blob(handle, column) else { return .string("") }
      return .string(Data(bytes: pointer, count: count).base64EncodedString())
    default: return .null
    }
  }

  /// How column `index` spells the real JSON cannot hold: `+Inf`, `-Inf`
  /// or `NaN`.
  func nonFiniteReal(_ index: Int) -> String {
    let value = sqlite3_column_double(handle, Int32(index))
    return value.isNaN ? "NaN" : (value > 0 ? "+Inf" : "-Inf")
  }

  /// Binds `value` to parameter `index` (1-based): numbers as integers when
  /// they are exact 64-bit integers, else as reals when they round-trip,
  /// else as text; objects and arrays as their JSON text.
  func bind(_ value: JSONValue?, at index: Int) throws {
    let i = Int32(index)
    let rc: Int32
    switch value {
    case nil, .null?: rc = sqlite3_bind_null(handle, i)
    case .bool(let flag)?: rc = sqlite3_bind_int64(handle, i, flag ? 1 : 0)
    case .number(let text)?:
      if let integer = Int64(text) {
        rc = sqlite3_bind_int64(handle, i, integer)
      } else if let double = Double(text), double.isFinite, SQLiteStatement.exactReal(text, double) {
        rc = sqlite3_bind_double(handle, i, double)
      } else {
        rc = bindText(text, at: i)
      }
    case .string(let text)?: rc = bindText(text, at: i)
    case .array?, .object?: rc = bindText(value!.compactString, at: i)
    }
    try database.check(rc, "sqlite3_bind")
  }

  /// Whether a decimal literal reads back from its double unchanged in
  /// value (so `1.50` binds as 1.5 but a 30-digit decimal stays text).
  static func exactReal(_ text: String, _ double: Double) -> Bool {
    let digits = text.filter(\.isNumber).drop { $0 == "0" }
    return digits.count <= 15 || "\(double)" == text
  }

  private func bindText(_ text: String, at index: Int32) -> Int32 {
    // SQLITE_TRANSIENT: SQLite copies the bytes before this returns.
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    return sqlite3_bind_text(handle, index, text, -1, transient)
  }
}
