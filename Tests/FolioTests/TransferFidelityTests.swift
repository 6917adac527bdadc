import Folio
import FolioTestSupport
import Foundation
import Testing

/// The Swift API's side of issue 54's import and export options: null
/// spellings, the remembered column order, LF or CRLF, nested columns and
/// the error for a column no document has.
struct TransferFidelityTests {
  static let yaml = """
    version: 1
    tables:
      # samples, as measured
      t:
        path: data/t
    """

  @Test func nullValuesFieldsAndLineEndsThroughTheAPI() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try scratch.write("in.csv", "b,a,c\nNA,1.50,\\N\n\"NA\",007,x\n")
    var options = ImportOptions(path: scratch.path + "/in.csv")
    options.nullValues = ["NA", "\\N"]
    let summary = try store.importRows(into: "t", options: options)
    #expect(summary.columns == ["b", "a", "c"])
    #expect(summary.fields == ["b", "a", "c"])
    // Written in place, under the table's comment (and its test layout, if
    // any), and committed.
    let yaml = try #require(scratch.read("folio.yaml"))
    let table = withTestLayout("  # samples, as measured\n  t:\n    path: data/t\n")
    #expect(yaml.contains(table + "    fields: [b, a, c]\n"), "\(yaml)")

    let reopened = try Store(at: scratch.url)
    #expect(try reopened.table(named: "t").fields == ["b", "a", "c"])
    var export = ExportOptions()
    export.format = .csv
    export.outputPath = scratch.path + "/out.csv"
    export.nullValues = ["NA"]
    try reopened.exportRows(from: "t", options: export)
    #expect(scratch.read("out.csv") == "b,a,c\nNA,1.50,NA\n\"NA\",007,x\n")
    export.crlf = true
    export.includeKey = true
    export.nullValues = []
    try reopened.exportRows(from: "t", options: export)
    let lines = try #require(scratch.read("out.csv")).components(separatedBy: "\r\n")
    #expect(lines[0] == "id,b,a,c")
    #expect(lines[1].hasSuffix(",,1.50,") && lines[1].count == 26 + 7)
    #expect(lines[2].hasSuffix(",NA,007,x"))
  }

  @Test func columnPathsAndAnUnknownColumn() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    // An empty table has nothing to check a column against.
    var empty = ExportOptions()
    empty.format = .csv
    empty.columns = ["anything"]
    empty.outputPath = scratch.path + "/empty.csv"
    try store.exportRows(from: "t", options: empty)
    #expect(scratch.read("empty.csv") == "anything\n")
    try scratch.write("in.ndjson", #"{"id":"a","o":{"dep time":1},"bill_length_mm":2}"# + "\n")
    _ = try store.importRows(into: "t", options: ImportOptions(path: scratch.path + "/in.ndjson"))
    var export = ExportOptions()
    export.format = .csv
    export.outputPath = scratch.path + "/out.csv"
    export.columnPaths = try FieldPath.list(parsing: "o.`dep time`,bill_length_mm")
    try store.exportRows(from: "t", options: export)
    #expect(scratch.read("out.csv") == "o.dep time,bill_length_mm\n1,2\n")
    export.columns = ["bill_lenght_mm"]
    export.columnPaths = nil
    let error = try #require(throws: FolioError.self) { try store.exportRows(from: "t", options: export) }
    #expect(error.code == .usage)
    #expect(
      error.message
        == "no document of table 't' has the field 'bill_lenght_mm' named in the columns; did you mean bill_length_mm?"
    )
    export.columnPaths = [FieldPath(["o", "dep tme"])]
    let nested = try #require(throws: FolioError.self) { try store.exportRows(from: "t", options: export) }
    #expect(
      nested.message.hasSuffix("has the field 'o.dep tme' named in the columns; did you mean o.`dep time`?"))
  }
}
