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

  @Test(arguments: [
    ["rm", "todos", "--dry-run"], ["rm", "todos", "a", "--where", "x == 1"],
    ["apply", "todos", "--where", "done == true"],
  ])
  func misuseIsAUsageError(_ arguments: [String]) throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    let result = try FolioRunner.run(arguments, in: scratch.path)
    #expect(result.status == 64, "\(result.stderr)")
  }
}
