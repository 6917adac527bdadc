import FolioTestSupport
import Foundation
import Testing

/// Issue 15 §5: `folio apply TABLE --where` and `folio rm TABLE --where`.
struct ApplyWhereCLITests {
  static func seeded() throws -> CLIScratch {
    let scratch = try CLIScratch()
    try #require(try scratch.folio("init").status == 0)
    for (pk, done) in [("a", false), ("b", true), ("c", false)] {
      let result = try scratch.folio(
        "apply", "todos", pk, "--op", "insert", "--columns", #"{"done":\#(done)}"#)
      try #require(result.status == 0, "\(result.stderr)")
    }
    return scratch
  }

  @Test func applyWhereUpdatesEveryMatchInOneGo() throws {
    let scratch = try Self.seeded()
    defer { scratch.remove() }
    let result = try scratch.folio(
      "apply", "todos", "--where", "done == false", "--op", "update", "--columns", #"{"owner":"ana"}"#,
      "--transforms", #"{"views":{"op":"increment","by":2}}"#)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.split(separator: "\n") == [
        #"{"path":"owner","pk":"a","type":"set","value":"ana"}"#,
        #"{"by":2,"path":"views","pk":"a","type":"incremented"}"#,
        #"{"path":"owner","pk":"c","type":"set","value":"ana"}"#,
        #"{"by":2,"path":"views","pk":"c","type":"incremented"}"#,
      ])
    #expect(scratch.read("data/todos/b.json")?.contains("owner") == false)
    #expect(scratch.read("data/todos/c.json")?.contains(#""views": 2"#) == true)
  }

  @Test func dryRunListsAndChangesNothing() throws {
    let scratch = try Self.seeded()
    defer { scratch.remove() }
    let before = scratch.read("data/todos/b.json")
    let result = try scratch.folio("rm", "todos", "--where", "done == true", "--dry-run")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "\"b\"\n")
    #expect(result.stderr.contains("dry run"))
    #expect(scratch.read("data/todos/b.json") == before)
    let removed = try scratch.folio("rm", "todos", "--where", "done == true")
    #expect(removed.status == 0)
    #expect(removed.stdout == #"{"path":"","pk":"b","type":"removed"}"# + "\n")
    #expect(scratch.read("data/todos/b.json") == nil)
  }

  @Test func noMatchSaysSoAndExitsZero() throws {
    let scratch = try Self.seeded()
    defer { scratch.remove() }
    let result = try scratch.folio(
      "apply", "todos", "--where", "views > 100", "--op", "update", "--columns", #"{"x":1}"#)
    #expect(result.status == 0)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("no document in table 'todos' matches 'views > 100'"))
  }

  @Test func malformedTransformsChangeNoFile() throws {
    let scratch = try Self.seeded()
    defer { scratch.remove() }
    let before = ["a", "b", "c"].map { scratch.read("data/todos/\($0).json") }
    let log = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/.folio/ops")
      .map { scratch.read(".folio/ops/" + $0) }
    let result = try scratch.folio(
      "apply", "todos", "--where", "done == false", "--op", "update", "--transforms",
      #"{"views":{"op":"increment","by":1.5}}"#)
    #expect(result.status == 1)
    #expect(result.stderr.hasPrefix("error: LOCAL_CONSTRAINT: "))
    #expect(["a", "b", "c"].map { scratch.read("data/todos/\($0).json") } == before)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/.folio/ops")
        .map { scratch.read(".folio/ops/" + $0) } == log)
  }

  /// A filter that does not parse is a usage error, as in `folio query`;
  /// a field no document has is named before anything is written, and
  /// `--strict` refuses it.
  @Test func filterMistakesAreCaughtBeforeAnyWrite() throws {
    let scratch = try Self.seeded()
    defer { scratch.remove() }
    let before = ["a", "b", "c"].map { scratch.read("data/todos/\($0).json") }
    let bad = try scratch.folio("rm", "todos", "--where", "done = true")
    #expect(bad.status == 64)
    #expect(
      bad.stderr.hasPrefix("error: --where:1:6: '=' is not a comparison; write '==' to test equality\n"))
    let bare = try scratch.folio(
      "apply", "todos", "--where", "owner == ana", "--op", "update", "--columns", #"{"x":1}"#)
    #expect(bare.status == 64)
    #expect(bare.stderr.contains("'ana' after '==' is a bare word"))
    let typo = try scratch.folio("rm", "todos", "--where", "dne == true", "--strict")
    #expect(typo.status == 64)
    #expect(
      typo.stderr.hasPrefix(
        "error: --where: no document of table 'todos' has a field 'dne'; did you mean 'done'?\n"),
      "\(typo.stderr)")
    let warned = try scratch.folio(
      "apply", "todos", "--where", "dne == true", "--op", "update", "--columns", #"{"x":1}"#)
    #expect(warned.status == 0)
    #expect(
      warned.stderr.hasPrefix(
        "warning: --where: no document of table 'todos' has a field 'dne'; did you mean 'done'? (--strict makes this an error)\n"
      ), "\(warned.stderr)")
    #expect(["a", "b", "c"].map { scratch.read("data/todos/\($0).json") } == before)
  }

  @Test(arguments: [
    ["rm", "todos", "--dry-run"], ["rm", "todos", "a", "--where", "x == 1"],
    ["apply", "todos", "--where", "done == true"], ["rm", "todos", "a", "--strict"],
  ])
  func misuseIsAUsageError(_ arguments: [String]) throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    let result = try FolioRunner.run(arguments, in: scratch.path)
    #expect(result.status == 64, "\(result.stderr)")
  }
}
