import Folio
import FolioTestSupport
import Foundation
import Testing

/// Import → export round trips in every format, compared row by
/// row with full equality, and the schema of an SQLite export.
struct TransferRoundTripCLITests {
  static let yaml = """
    version: 1
    tables:
      items:
        path: items
      back:
        path: back
      third:
        path: third
      ranked:
        path: ranked
        order: [rank, title]
    """

  /// Unicode, embedded newlines, quotes, commas and tabs, integers beyond 64
  /// bits (both signs), nulls, booleans, decimals, nested values, a column
  /// of mixed types, and a row that lacks most columns.
  static let rows = [
    #"{"id":"a","name":"Zoë 🚀 日本 ǅ","note":"line one\nline \"two\"\r\nthree, with a comma\tand a tab","big":123456789012345678901234567890,"neg":-98765432109876543210,"n":null,"flag":true,"dec":1.50,"nested":{"k":[1,{"x":true,"q":"say \"hi\"\n"}]},"i":42}"#,
    #"{"id":"b","name":"plain","note":"","big":-7,"neg":9223372036854775807,"n":1,"flag":false,"dec":-0.25,"nested":[],"i":0}"#,
    #"{"id":"c","name":"007","note":"a,b","big":0,"neg":-9223372036854775808,"n":"text","flag":null,"dec":2.5,"nested":{},"i":-1}"#,
    #"{"id":"d","name":"only a name"}"#,
  ]

  static var columns: [String] { ["big", "dec", "flag", "i", "name", "neg", "nested", "n", "note"] }

  private func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    return scratch
  }

  /// The table's rows as NDJSON, parsed with Folio's parser (number text
  /// kept exactly).
  private func exported(_ table: String, in scratch: CLIScratch) throws -> [JSONObject] {
    let result = try scratch.folio("export", table)
    #expect(result.status == 0, "\(result.stderr)")
    return try result.stdout.split(separator: "\n").map {
      try #require(JSONValue(parsing: String($0)).objectValue)
    }
  }

  /// What a row becomes after a trip through `format`, as documented: CSV
  /// and TSV bring nested values back as JSON text and a missing column as
  /// null; SQLite turns booleans into 0/1, nested values into JSON text,
  /// decimals into REALs (`1.50` → `1.5`), integers beyond 64 bits into
  /// text, and a missing column into null.
  static func expected(_ row: JSONObject, after format: String) -> JSONObject {
    guard format != "ndjson" && format != "json" else { return row }
    var result = row
    for column in columns {
      let value = row[column] ?? .null
      switch (format, value) {
      case (_, .object), (_, .array): result[column] = .string(value.compactString)
      case ("sqlite", .bool(let flag)): result[column] = .number(flag ? "1" : "0")
      case ("sqlite", .number(let text)) where Int64(text) == nil:
        if text.contains(".") {
          result[column] = .number("\(Double(text)!)")
        } else {
          result[column] = .string(text)
        }
      default: result[column] = value
      }
    }
    return result
  }

  @Test(arguments: ["ndjson", "json", "csv", "tsv", "sqlite"])
  func roundTrip(format: String) throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("in.ndjson", Self.rows.joined(separator: "\n") + "\n")
    let source = try Self.rows.map { try #require(JSONValue(parsing: $0).objectValue) }
    let imported = try scratch.folio("import", "items", "in.ndjson")
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(try exported("items", in: scratch) == source)

    let file = "out." + (format == "sqlite" ? "db" : format)
    let out = try scratch.folio("export", "items", "--format", format, "-o", file, "--sqlite-table", "t")
    #expect(out.status == 0, "\(out.stderr)")
    let back = try scratch.folio("import", "back", file, "--format", format, "--sqlite-table", "t")
    #expect(back.status == 0, "\(back.stderr)")
    let rows = try exported("back", in: scratch)
    let expected = source.map { Self.expected($0, after: format) }
    #expect(rows.count == expected.count)
    for (row, want) in zip(rows, expected) {
      #expect(
        row == want,
        "\(format): \(JSONValue.object(row).compactString) != \(JSONValue.object(want).compactString)")
    }
    // A second trip changes nothing more: the changes above are the whole
    // story. (CSV bytes may differ in quoting only: a nested `[]` is quoted,
    // the string "[]" it came back as need not be.)
    let again = "again." + (format == "sqlite" ? "db" : format)
    #expect(
      try scratch.folio("export", "back", "--format", format, "-o", again, "--sqlite-table", "t").status == 0)
    #expect(
      try scratch.folio("import", "third", again, "--format", format, "--sqlite-table", "t").status == 0)
    #expect(try exported("third", in: scratch) == rows)
    if format == "ndjson" || format == "json" {
      #expect(scratch.read(again) == scratch.read(file))
    } else if format == "sqlite" {
      let all = "SELECT * FROM t ORDER BY id"
      #expect(try sqlite(again, all, in: scratch) == sqlite(file, all, in: scratch))
    }
  }

  @Test func sqliteExportSchema() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let rows = [
      #"{"id":"r1","rank":3,"score":1.25,"title":"x","flag":true,"meta":{"a":1},"mixed":1}"#,
      #"{"id":"r2","rank":1,"score":2,"title":"y","flag":false,"meta":[2],"mixed":"one"}"#,
      #"{"id":"r3","rank":2,"score":0.5,"title":"z","flag":null,"meta":null,"mixed":null}"#,
    ]
    try scratch.write("in.ndjson", rows.joined(separator: "\n") + "\n")
    #expect(try scratch.folio("import", "ranked", "in.ndjson").status == 0)
    #expect(try scratch.folio("export", "ranked", "-o", "out.db", "--sqlite-table", "t").status == 0)
    // name|type|pk for each column, as SQLite itself reports them.
    let info = try sqlite("out.db", "SELECT name, type, pk FROM pragma_table_info('t')", in: scratch)
    #expect(
      info == [
        "id|TEXT|1", "flag|INTEGER|0", "meta|TEXT|0", "mixed||0", "rank|INTEGER|0", "score|REAL|0",
        "title|TEXT|0",
      ])
    let indexed = try sqlite(
      "out.db",
      "SELECT ii.name FROM pragma_index_list('t') AS il, pragma_index_info(il.name) AS ii WHERE il.origin = 'c' ORDER BY ii.name",
      in: scratch)
    #expect(indexed == ["rank", "title"])
    // Rows inserted in the table's order; the pk is unique.
    #expect(try sqlite("out.db", "SELECT id FROM t ORDER BY rowid", in: scratch) == ["r2", "r3", "r1"])
    #expect(try sqlite("out.db", "SELECT count(*) FROM t WHERE rank = 1", in: scratch) == ["1"])
    #expect(
      try sqlite("out.db", "INSERT INTO t (id) VALUES ('r1')", in: scratch).joined().contains(
        "UNIQUE constraint failed: t.id"))

    // Another table in the file is left alone; exporting again replaces t.
    #expect(try scratch.folio("export", "ranked", "-o", "out.db", "--sqlite-table", "other").status == 0)
    let replaced = try scratch.folio(
      "export", "ranked", "-o", "out.db", "--sqlite-table", "t", "--limit-to-first", "1")
    #expect(replaced.status == 0, "\(replaced.stderr)")
    #expect(try sqlite("out.db", "SELECT id FROM t ORDER BY rowid", in: scratch) == ["r2"])
    #expect(try sqlite("out.db", "SELECT count(*) FROM other", in: scratch) == ["3"])

    // --columns without the pk: the pk is added first, as the primary key.
    let partial = try scratch.folio(
      "export", "ranked", "-o", "cols.db", "--sqlite-table", "t", "--columns", "title,rank")
    #expect(partial.status == 0, "\(partial.stderr)")
    #expect(
      try sqlite("cols.db", "SELECT name, type, pk FROM pragma_table_info('t')", in: scratch) == [
        "id|TEXT|1", "title|TEXT|0", "rank|INTEGER|0",
      ])
    #expect(
      try sqlite("cols.db", "SELECT * FROM t ORDER BY rowid", in: scratch) == ["r2|y|1", "r3|z|2", "r1|x|3"])
  }

  /// Runs `sql` on `database` with the `sqlite3` shell (libsqlite3's own
  /// reading of the file); returns its output lines, errors included.
  private func sqlite(_ database: String, _ sql: String, in scratch: CLIScratch) throws -> [String] {
    try #require(try FolioRunner.shell("command -v sqlite3 > /dev/null", in: scratch.path) == 0)
    try scratch.write(".sql", sql + ";\n")
    _ = try FolioRunner.shell("sqlite3 \(database) < .sql > .sql-out 2>&1", in: scratch.path)
    return (scratch.read(".sql-out") ?? "").split(separator: "\n").map(String.init)
  }
}
