import Folio
import FolioCore
import FolioJSON
import FolioQuery
import FolioTestSupport
import Testing

/// Field names as a person types them: backticked segments, projection,
/// and the fields a query names that no document holds.
struct FieldNameTests {
  @Test(arguments: [
    ("a", ["a"]), ("a.b", ["a", "b"]), ("`dep time`", ["dep time"]), ("meta.`a.b`", ["meta", "a.b"]),
    ("`a,b`.c", ["a,b", "c"]), ("x~1y", ["x.y"]), ("`1`", ["1"]),
  ])
  func pathsParse(_ text: String, _ segments: [String]) throws {
    #expect(try FieldPath(parsing: text).segments == segments)
    #expect(try FieldPath(parsing: FieldPath(segments).commandLineText).segments == segments)
  }

  @Test(arguments: [
    ("", 1, "empty segment"), ("a..b", 3, "empty segment"), ("`a", 1, "unterminated"),
    ("`a`b", 4, "expected '.'"), ("a`b`", 2, "a backtick starts a segment"), ("``", 1, "empty segment"),
  ])
  func pathMistakesCarryTheColumn(_ text: String, _ column: Int, _ words: String) {
    let error = #expect(throws: FolioError.self) { try FieldPath(parsing: text, source: "--select") }
    #expect(error?.code == .invalidQuery)
    #expect(error?.location?.column == column, "\(text): \(String(describing: error))")
    #expect(error?.message.contains(words) == true, "\(text): \(String(describing: error))")
  }

  @Test func listsSplitOnCommasOutsideBackticks() throws {
    let paths = try FieldPath.list(parsing: "a,`b, c`.d,e")
    #expect(paths.map(\.segments) == [["a"], ["b, c", "d"], ["e"]])
    #expect(throws: FolioError.self) { try FieldPath.list(parsing: "a,,b") }
    // Spaces around a segment are a list's layout, as a person types it;
    // inside backticks they belong to the name.
    let spaced = try FieldPath.list(parsing: " a , b . c, ` d e ` ,f g")
    #expect(spaced.map(\.segments) == [["a"], ["b", "c"], [" d e "], ["f g"]])
    #expect(throws: FolioError.self) { try FieldPath.list(parsing: "a, ,b") }
  }

  @Test func selectingKeepsNestingAndSkipsWhatIsMissing() {
    let doc: JSONObject = ["a": 1, "b": ["c": 2, "d": 3], "e": 4, "dep time": 5]
    #expect(
      doc.selecting(["b.c", "a", "zz", FieldPath(["dep time"])]) == ["a": 1, "b": ["c": 2], "dep time": 5])
  }

  @Test func unknownFieldsNameTheNearestField() throws {
    let (store, scratch) = try makeStore(yaml: "version: 1\ntables:\n  t:\n    path: t\n    key: id\n")
    defer { scratch.remove() }
    let t = store.collection("t")
    #expect(try t.unknownFields(["anything"]).isEmpty, "an empty table is not warned about")
    try store.write { tx in
      for i in 0..<700 {
        var doc: JSONObject = ["bill_length_mm": .integer(i), "meta": ["colour": "red"], "n": .null]
        // A field only the last document holds is still a field.
        if i == 699 { doc["rare"] = true }
        _ = try tx.put(table: "t", pk: "p\(i)", document: .object(doc))
      }
    }
    let unknown = try t.unknownFields([
      "bill_lenght_mm", "rare", "n", "id", "meta.color", "wingspan", "meta.colour",
    ])
    #expect(unknown.map(\.path) == ["bill_lenght_mm", "meta.color", "wingspan"])
    #expect(unknown.map(\.suggestion) == ["bill_length_mm", "meta.colour", nil])
    #expect(
      unknown[0].description
        == "no document of table 't' has a field 'bill_lenght_mm'; did you mean 'bill_length_mm'?")
    #expect(
      try Predicate(parsing: "a > 1 && (exists(b.c) || !`d e`)").paths == ["a", "b.c", FieldPath(["d e"])])
  }
}
