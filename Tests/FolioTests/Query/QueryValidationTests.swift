import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

struct QueryValidationTests {
  func query() throws -> (Query, Scratch) {
    let (store, scratch) = try makeStore()
    return (store.collection("todos").query(), scratch)
  }

  func expectMistake(_ words: String, _ body: () throws -> Query) {
    let error = #expect(throws: FolioError.self) { _ = try body() }
    #expect(error?.code == .invalidQuery)
    #expect(error?.message.contains(words) == true, "\(String(describing: error?.message))")
  }

  @Test func invalidCombinationsNameTheMistake() throws {
    let (q, scratch) = try query()
    defer { scratch.remove() }
    expectMistake("one ordering") { try q.orderByKey().orderBy(child: "a") }
    expectMistake("one ordering") { try q.orderBy(child: "a").orderByValue() }
    expectMistake("one start") { try q.startAt(1).startAfter(2) }
    expectMistake("one start") { try q.equalTo(1).startAt(2) }
    expectMistake("one end") { try q.endAt(1).endBefore(2) }
    expectMistake("one end") { try q.endAt(1).equalTo(2) }
    expectMistake("one limit") { try q.limitToFirst(1).limitToLast(2) }
    expectMistake("one limit") { try q.limitToFirst(1).limitToFirst(2) }
    expectMistake("1 or more") { try q.limitToFirst(0) }
    expectMistake("1 or more") { try q.limitToLast(-3) }
    expectMistake("drop key:") { try q.orderByKey().startAt("a", key: "b") }
    expectMistake("drop key:") { try q.endAt("a", key: "b").orderByKey() }
    expectMistake("a pk") { try q.orderByKey().startAt(true) }
    // Firebase: with orderByKey the cursor must be a string.
    expectMistake("must be a pk") { try q.orderByKey().startAt(5) }
    // Child paths, as Firebase checks them.
    expectMistake("empty") { try q.orderBy(child: "") }
    expectMistake("orderByKey") { try q.orderBy(child: "$key") }
    expectMistake("'['") { try q.orderBy(child: "a[0]") }
    expectMistake("'#'") { try q.orderBy(child: "a#b") }
    expectMistake("empty segment") { try q.orderBy(child: "a/") }
  }

  /// Any JSON value is a cursor (issue 13), and `meta/score` is `meta.score`.
  @Test func objectCursorsAndFirebasePaths() throws {
    let (q, scratch) = try query()
    defer { scratch.remove() }
    _ = try q.startAt([1])
    _ = try q.endBefore(["a": 1], key: "k")
    #expect(try q.orderBy(child: "meta/score").ordering == .child(FieldPath(["meta", "score"])))
    #expect(try q.orderBy(child: "meta.score").ordering == .child(FieldPath(["meta", "score"])))
    #expect(try q.orderBy(child: "a~1b/c").ordering == .child(FieldPath(["a.b", "c"])))
  }

  @Test func validChainsLeaveTheOriginalAlone() throws {
    let (q, scratch) = try query()
    defer { scratch.remove() }
    try q.collection.store.write { tx in
      for i in 1...6 {
        try tx.apply(table: "todos", pk: "t\(i)", op: .insert, columns: ["lastUpdate": .integer(i % 3)])
      }
    }
    let a = try q.orderBy(child: "lastUpdate")
    let original = try a.get().map(\.pk)
    #expect(original == ["t3", "t6", "t1", "t4", "t2", "t5"])
    let first = try a.startAt(1).limitToFirst(3)
    #expect(try first.get().map(\.pk) == ["t1", "t4", "t2"])
    // Immutable: a can still take a start and a limit, and still means what it did.
    let last = try a.startAfter(1, key: "t1").limitToLast(2)
    #expect(try last.get().map(\.pk) == ["t2", "t5"])
    let filtered = try a.where("lastUpdate != 1").endBefore(2)
    #expect(try filtered.get().map(\.pk) == ["t3", "t6"])
    #expect(try a.get().map(\.pk) == original)
    #expect(try a.count() == 6)
    #expect(try first.get().map(\.pk) == ["t1", "t4", "t2"])
    #expect(try q.orderByKey().limitToFirst(1).get().map(\.pk) == ["t1"])
    #expect(try q.get().map(\.pk) == original)
  }

  @Test(arguments: [
    ("a ==", 5, "expected a value after '=='"),
    ("a = 1", 3, "write '=='"),
    ("(a == 1", 8, "expected ')'"),
    ("a == 1 b", 8, "unexpected 'b'"),
    ("a == 01", 6, "invalid number"),
    ("a == \"x", 6, "unterminated string"),
    ("", 1, "empty expression"),
    ("a in [1, ]", 10, "expected a JSON value"),
    ("exists(1)", 8, "expected a path"),
    ("a.", 3, "path segment"),
    (
      "sex == male", 8,
      #"'male' after '==' is a bare word: quote text as "male", or write a field on the right in backticks, `male`"#
    ),
    ("sex in [\"f\", male]", 14, #"'male' in the array is a bare word: quote text as "male""#),
    ("sex == 'male'", 8, #"strings take double quotes, as in JSON: write "male""#),
    ("n > x.y", 5, "'x.y' after '>' is a bare word"),
  ])
  func predicateErrorsCarryTheColumn(_ text: String, _ column: Int, _ words: String) {
    let error = #expect(throws: FolioError.self) { try Predicate(parsing: text, source: "--where") }
    #expect(error?.code == .invalidQuery)
    #expect(error?.location?.column == column, "\(text): \(String(describing: error))")
    #expect(error?.message.contains(words) == true, "\(text): \(String(describing: error))")
    #expect(error?.description.hasPrefix("--where:1:\(column): error: ") == true)
  }

  @Test func predicateSemantics() throws {
    let doc: JSONObject = [
      "a": 5, "s": "hello", "tags": ["x", "y"], "n": .null,
      "meta": ["color": "red", "size": .number("2.50")],
      "first name": "Ada", "done": true,
    ]
    let cases: [(String, Bool)] = [
      ("a == 5", true), ("a == 5.0", true), ("a != 5", false), ("a < 6 && a >= 5", true),
      ("missing < 1", false), ("missing == null", true), ("n == null", true), ("s > 5", false),
      ("n < 1", false), ("n <= null", false), ("missing >= null", false), ("!(missing < 1)", true),
      ("missing != 5", true), ("n != null", false), ("a != null", true), ("s >= \"hello\"", true),
      ("done > false", true), ("done < 1", false), ("tags <= `tags`", false), ("5 > a", false),
      ("6 > a", true), ("\"hello\" == s", true), ("a > \"4\"", false),
      ("s contains \"ell\"", true), ("tags contains \"y\"", true), ("tags contains \"z\"", false),
      ("a in [1, 5]", true), ("a in [1, 2]", false), ("meta.color == \"red\"", true),
      ("meta.size == 2.5", true), ("exists(n)", true), ("exists(missing)", false),
      ("!exists(missing) && !(a > 5)", true), ("a > 10 || s == \"hello\"", true),
      ("`first name` == \"Ada\"", true), ("done", true), ("!done", false), ("tags == [\"x\", \"y\"]", true),
      ("meta == {\"size\": 2.5, \"color\": \"red\"}", true), ("tags < `s`", false), ("s < `tags`", false),
      ("a == `a`", true), ("a < `meta`.size", false),
      ("meta.size < `a`", true),
      ("a == \"5\"", false),
    ]
    for (text, expected) in cases {
      #expect(try Predicate(parsing: text).matches(doc) == expected, "\(text)")
    }
  }
}
