import FolioTestSupport
import Foundation
import Testing

/// A document file left broken by an editor (a save cut short, a stray
/// comma) never takes a table's queries down: `query`, `export`, `status`
/// and `commit` answer the rest, name each broken file at
/// `path:line:col`, and exit 3.
@Suite struct LeftOutFilesCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
        order: [due]
    """

  /// What every command prints for the two broken files, on stderr.
  static let warnings = """
    data/todos/p3.json:4:12: warning: left out: unterminated string
      "title": "t
               ^
    data/todos/p4.json:1:23: warning: left out: expected an object key after ',', found ','
    {"due": 4, "id": "p4",, "title": "t4"}
                          ^

    """

  /// Five committed todos, then p3 cut short and p4 with a stray comma.
  func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    for i in 1...5 {
      #expect(
        try scratch.folio("put", "todos", "p\(i)", input: #"{"title": "t\#(i)", "due": \#(i)}"#).status == 0)
    }
    #expect(try scratch.folio("commit").status == 0)
    try scratch.write("data/todos/p3.json", "{\n  \"due\": 3,\n  \"id\": \"p3\",\n  \"title\": \"t")
    try scratch.write("data/todos/p4.json", "{\"due\": 4, \"id\": \"p4\",, \"title\": \"t4\"}\n")
    return scratch
  }

  @Test(arguments: [
    ["query", "todos"],
    ["query", "todos", "--order-by-key"],
    ["query", "todos", "--order-by-child", "title"],
    ["query", "todos", "--where", "due > 1"],
    ["query", "todos", "--limit-to-first", "2"],
    ["query", "todos", "--format", "json"],
    ["query", "todos", "--format", "table"],
    ["query", "todos", "--format", "csv"],
    ["query", "todos", "--count"],
    ["export", "todos"],
    ["export", "todos", "--format", "csv"],
  ])
  func queriesAndExportsAnswerTheRestAndExit3(arguments: [String]) throws {
    let scratch = try store()
    defer { scratch.remove() }
    let result = try FolioRunner.run(arguments, in: scratch.path)
    #expect(result.status == 3, "\(arguments): \(result.stderr)")
    #expect(result.stderr.hasSuffix(Self.warnings), "\(arguments): \(result.stderr)")
    #expect(!result.stdout.contains("t3") && !result.stdout.contains("t4"), "\(arguments)")
    if arguments.contains("--count") {
      #expect(result.stdout == "3\n")
    } else if arguments.contains("--limit-to-first") {
      #expect(result.stdout.contains("t1") && result.stdout.contains("t2"))
    } else {
      #expect(result.stdout.contains("t2") && result.stdout.contains("t5"), "\(arguments): \(result.stdout)")
    }
    if arguments[0] == "export" {
      #expect(result.stderr.contains("left out 2 file(s) that do not parse"), "\(result.stderr)")
    }
  }

  @Test func statusAndCommitNameTheFilesAndCommitTheRest() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("data/todos/p1.json", "{\"due\": 1, \"id\": \"p1\", \"title\": \"edited\"}\n")
    let status = try scratch.folio("status")
    #expect(status.status == 3)
    #expect(status.stderr == Self.warnings)
    #expect(status.stdout.contains("edited outside Folio: p1"), "\(status.stdout)")
    let json = try scratch.folio("status", "--json")
    #expect(json.status == 3)
    #expect(json.stdout.contains(#"{"problem":"data/todos/p3.json:4:12: error: unterminated string"}"#))
    let commit = try scratch.folio("commit")
    #expect(commit.status == 3)
    #expect(commit.stderr == Self.warnings)
    #expect(commit.stdout.hasPrefix("committed "), "\(commit.stdout)")
    #expect(try scratch.git("show HEAD:data/todos/p1.json").contains("edited"))
    #expect(
      try scratch.git("show HEAD:data/todos/p4.json").contains(#""title": "t4""#), "the broken edit stays out"
    )
  }

  @Test func onceFixedEverythingIsAnsweredAndTheStatusIs0() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("query", "todos").status == 3)
    try scratch.write("data/todos/p3.json", "{\"due\": 3, \"id\": \"p3\", \"title\": \"t3\"}\n")
    try scratch.write("data/todos/p4.json", "{\"due\": 4, \"id\": \"p4\", \"title\": \"t4\"}\n")
    let result = try scratch.folio("query", "todos", "--where", "due > 2")
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    #expect(result.stdout.split(separator: "\n").count == 3)
  }

  /// A table with no order key counts by pk without reading a document;
  /// a file that stopped parsing since the last query is still left out.
  @Test func aCountByPKLeavesTheFileOutToo() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    for i in 1...3 {
      #expect(try scratch.folio("put", "todos", "p\(i)", input: #"{"due": \#(i)}"#).status == 0)
    }
    #expect(try scratch.folio("query", "todos", "--count").stdout == "3\n")
    try scratch.write("data/todos/p2.json", "{\"due\": 2,")
    for _ in 0..<2 {
      let count = try scratch.folio("query", "todos", "--count")
      #expect(count.status == 3)
      #expect(count.stdout == "2\n")
      #expect(
        count.stderr
          == "data/todos/p2.json:1:11: warning: left out: expected an object key after ',', found end of input\n{\"due\": 2,\n          ^\n"
      )
    }
  }

  @Test func aFileThatHoldsNoObjectIsLeftOutToo() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("data/todos/p3.json", "{\"due\": 3, \"id\": \"p3\", \"title\": \"t3\"}\n")
    try scratch.write("data/todos/p4.json", "[\"due\", 4]\n")
    let result = try scratch.folio("query", "todos")
    #expect(result.status == 3)
    #expect(
      result.stderr
        == "data/todos/p4.json:1:1: warning: left out: a document must be a JSON object, not an array\n")
    #expect(result.stdout.split(separator: "\n").count == 4)
  }
}
