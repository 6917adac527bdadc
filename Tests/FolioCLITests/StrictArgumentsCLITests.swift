import Folio
import FolioTestSupport
import Foundation
import Testing

/// Issue 13, part 4: every mistake below is a usage error (exit 64) whose
/// message names the problem, as Firebase's argument validation refuses
/// them; nothing is run.
struct StrictArgumentsCLITests {
  static let mistakes: [(arguments: [String], names: String)] = [
    (["query", "todos", "--start-at", "1", "--start-at", "3"], "--start-at"),
    (["query", "todos", "--equal-to", "1", "--equal-to", "2"], "--equal-to"),
    (["query", "todos", "--limit-to-first", "1", "--limit-to-first", "2"], "--limit-to-first"),
    (["query", "todos", "--limit-to-first", "0"], "positive whole number"),
    (["query", "todos", "--limit-to-first", "-1"], "positive whole number"),
    (["query", "todos", "--limit-to-first", "2.5"], "positive whole number"),
    (["query", "todos", "--limit-to-last", "ten"], "positive whole number"),
    (["query", "todos", "--limit-to-first", "0x10"], "positive whole number"),
    (["query", "todos", "--order-by-child", "a", "--order-by-child", "b"], "--order-by-child"),
    (["query", "todos", "--order-by-key", "--order-by-key"], "--order-by-key"),
    (["export", "todos", "--end-at", "1", "--end-at=2"], "--end-at"),
    (["query", "todos", "--order-by-key", "--start-at", "5"], "must be a pk"),
    (["query", "todos", "--order-by-key", "--equal-to", "true"], "must be a pk"),
    (["query", "todos", "--order-by-child", ""], "empty"),
    (["query", "todos", "--order-by-child", "$key"], "orderByKey"),
    (["query", "todos", "--order-by-child", "$value"], "orderByValue"),
    (["query", "todos", "--order-by-child", "$priority"], "priorities"),
    (["query", "todos", "--order-by-child", "a[0]"], "'['"),
    (["query", "todos", "--order-by-child", "a#b"], "'#'"),
    (["query", "todos", "--order-by-child", "a//b"], "empty segment"),
    (["query", "todos", "--order-by-child", "a\u{7}b"], "control character"),
    (["apply", "todos", "a", "--op", "upsert", "--columns", "{\"n\": 1"], "--columns is not valid JSON"),
    (["apply", "todos", "a", "--op", "upsert", "--transforms", "{oops}"], "--transforms is not valid JSON"),
    (["apply", "todos", "a", "--op", "upsert", "--op", "insert"], "--op"),
    (["-C", "/nonexistent/folio-dir", "tables"], "/nonexistent/folio-dir"),
  ]

  @Test func eachMistakeIsAUsageErrorThatNamesIt() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    try scratch.folio("apply", "todos", "a", "--op", "insert", "--columns", #"{"lastUpdate": 1}"#)
    for (arguments, names) in Self.mistakes {
      let result = try FolioRunner.run(arguments, in: scratch.path)
      #expect(result.status == 64, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(names), "\(arguments): \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(arguments)")
    }
    // Nothing was written by the refused applies.
    let a = try scratch.folio("get", "todos", "a")
    #expect(!a.stdout.contains("\"n\""), "\(a.stdout)")
  }

  /// A limit is any whole JSON number, as Firebase's SDKs take one; a
  /// count past any table is every document.
  @Test func aLimitIsAnyWholeJSONNumber() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    for (pk, time) in [("a", 1), ("b", 2), ("c", 3)] {
      try scratch.folio("apply", "todos", pk, "--op", "insert", "--columns", #"{"lastUpdate": \#(time)}"#)
    }
    for (text, expected) in [
      ("2", ["a", "b"]), ("2.0", ["a", "b"]), ("2e0", ["a", "b"]), ("0.1e1", ["a"]), ("1E+0", ["a"]),
      ("99999999999999999999999", ["a", "b", "c"]), ("1e400", ["a", "b", "c"]),
    ] {
      let result = try scratch.folio("query", "todos", "--limit-to-first", text)
      #expect(result.status == 0, "\(text): \(result.stderr)")
      let pks = try result.stdout.split(separator: "\n").map { line in
        try JSONValue(parsing: String(line))["id"]?.stringValue ?? ""
      }
      #expect(pks == expected, "--limit-to-first \(text)")
    }
  }

  /// A Firebase push id starts with `-`: read as an option it is refused
  /// with the way out, and after `--` it is a pk like any other.
  @Test func aPkStartingWithADashNeedsTheDoubleDash() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let refused = try scratch.folio("get", "todos", "-Nx3pushid")
    #expect(refused.status == 64)
    #expect(refused.stderr.contains("put -- before it"), "\(refused.stderr)")
    let put = try scratch.folio("put", "todos", "--", "-Nx3pushid", "-", input: #"{"lastUpdate": 1}"#)
    #expect(put.status == 0, "\(put.stderr)")
    let got = try scratch.folio("get", "todos", "--", "-Nx3pushid")
    #expect(got.status == 0 && got.stdout.contains("\"id\": \"-Nx3pushid\""), "\(got.stdout)\(got.stderr)")
    // A short one too (`put items -a -`): it may be a pk, so the way out
    // is said; a long one that is near an option names it.
    let short = try scratch.folio("put", "todos", "-a", "-", input: "{}")
    #expect(short.status == 64)
    #expect(
      short.stderr.hasPrefix(
        "error: unknown option '-a'; if it is a pk or another value, put -- before it: folio … -- -a\n"),
      "\(short.stderr)")
    let near = try scratch.folio("query", "todos", "--limit-to-frist", "2")
    #expect(near.status == 64)
    #expect(
      near.stderr.hasPrefix("error: unknown option '--limit-to-frist'; did you mean '--limit-to-first'?"))
  }

  @Test func wellFormedButInvalidTransformStaysALocalConstraint() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    // seed 002: a malformed transform is LOCAL_CONSTRAINT, exit 1.
    let result = try scratch.folio(
      "apply", "todos", "a", "--op", "upsert", "--transforms", #"{"views": {"op": "increment", "by": 1.5}}"#)
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stderr.contains("LOCAL_CONSTRAINT"), "\(result.stderr)")
  }

  @Test func repeatableOptionsStayRepeatable() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let made = try scratch.folio("init", "--table", "a", "--table", "b")
    #expect(made.status == 0, "\(made.stderr)")
    let added = try scratch.folio(
      "tables", "add", "c", "--counter", "x", "--counter", "w", "--set", "s", "--set", "t")
    #expect(added.status == 0, "\(added.stderr)")
    let yaml = scratch.read("folio.yaml") ?? ""
    for name in ["x: counter", "w: counter", "s: set", "t: set"] { #expect(yaml.contains(name), "\(yaml)") }
  }

  @Test func aFirebasePathIsTheSameAsADottedOne() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    for (pk, score) in [("a", 3), ("b", 1), ("c", 2)] {
      try scratch.folio(
        "apply", "todos", pk, "--op", "insert", "--columns", #"{"meta": {"score": \#(score)}}"#)
    }
    let slash = try scratch.folio("query", "todos", "--order-by-child", "meta/score")
    let dotted = try scratch.folio("query", "todos", "--order-by-child", "meta.score")
    #expect(slash.status == 0, "\(slash.stderr)")
    #expect(slash.stdout == dotted.stdout)
    let pks = slash.stdout.split(separator: "\n").compactMap { line in
      line.range(of: #""id":"(.)""#, options: .regularExpression).map {
        String(line[$0].dropFirst(6).prefix(1))
      }
    }
    #expect(pks == ["b", "c", "a"], "\(slash.stdout)")
  }

  /// A child path steps into arrays as Firebase's does: `arr/1` (or
  /// `arr.1`) is element 1, in queries, in an order index, in live queries
  /// and in reads over `folio serve`.
  @Test func aChildPathStepsIntoArrays() throws {
    let yaml = CLIScratch.yaml + "\n  lists:\n    path: data/lists\n    order: [arr.1]\n"
    let scratch = try CLIScratch(yaml: yaml)
    defer { scratch.remove() }
    try scratch.folio("init")
    for (pk, body) in [("a", #"{"arr": [5, 1]}"#), ("b", #"{"arr": [5, 0]}"#), ("c", #"{"arr": {"1": -1}}"#)]
    {
      try scratch.folio("put", "todos", pk, "-", input: body)
      try scratch.folio("put", "lists", pk, "-", input: body)
    }
    func pks(_ result: FolioRunner.Result) -> [String] {
      result.stdout.split(separator: "\n").compactMap { line in
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
      }
    }
    for path in ["arr.1", "arr/1"] {
      let unindexed = try scratch.folio("query", "todos", "--order-by-child", path)
      #expect(pks(unindexed) == ["c", "b", "a"], "\(path): \(unindexed.stdout)\(unindexed.stderr)")
    }
    let indexed = try scratch.folio("query", "lists", "--limit-to-first", "2")
    #expect(pks(indexed) == ["c", "b"], "\(indexed.stdout)\(indexed.stderr)")
    let explained = try scratch.folio("query", "lists", "--limit-to-first", "2", "--explain")
    #expect(explained.stdout.contains("index") || explained.stderr.contains("index"), "\(explained.stdout)")
    let server = try ServeCLITests.Server(in: scratch.path)
    defer { #expect(server.stop() == 0) }
    #expect(try ServeCLITests.curl("GET", server.base + "/todos/a/arr/1.json").body == "1")
    #expect(try ServeCLITests.curl("GET", server.base + "/todos/a/arr/7.json").body == "null")
    let ordered = try ServeCLITests.curl("GET", server.base + #"/lists.json?orderBy="arr/1"&limitToFirst=1"#)
    #expect(ordered.json?.objectValue?.keys.sorted() == ["c"], "\(ordered.body)")
    // A live query over the same path: c's element 1 grows past b's, and
    // b takes its place.
    let live = try ServeCLITests.EventClient(server.base + "/lists.json?orderBy=%22arr%2F1%22&limitToFirst=1")
    defer { live.stop() }
    #expect(live.event(1)?.1?["data"]?.objectValue?.keys.sorted() == ["c"])
    _ = try ServeCLITests.curl("PUT", server.base + "/lists/c/arr.json", body: "[0, 10]")
    let change = try #require(live.event(2))
    #expect(change.1?["data"]?["c"] == .null, "\(change)")
    #expect(change.1?["data"]?["b"]?["arr"] == [5, 0], "\(change)")
    #expect(pks(try scratch.folio("query", "lists", "--limit-to-first", "1")) == ["b"])
  }

  @Test func anObjectCursorPagesPastObjects() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    for (pk, value) in [("a", #"{"o": 2}"#), ("b", "[1]"), ("c", #"{"o": 1}"#), ("d", "5")] {
      try scratch.folio("apply", "todos", pk, "--op", "insert", "--columns", #"{"v": \#(value)}"#)
    }
    // Objects and arrays sort as one class, after 5, ties by pk: a, b, c.
    let page = try scratch.folio(
      "query", "todos", "--order-by-child", "v", "--start-after", #"{"any": "object"}"#, "--start-key", "a")
    #expect(page.status == 0, "\(page.stderr)")
    #expect(page.stdout.split(separator: "\n").count == 2, "\(page.stdout)")
    #expect(page.stdout.contains(#""id":"b""#) && page.stdout.contains(#""id":"c""#), "\(page.stdout)")
  }
}
