import FolioTestSupport
import Foundation
import Testing

struct CLITests {
  static let commands = [
    "init", "tables", "get", "query", "put", "apply", "rm", "evict", "log", "diff", "history", "blame",
    "fsck", "fmt", "commit",
    "status",
    "sync",
    "clone", "compact", "merge-driver", "diff-textconv", "watch", "import", "export", "observe",
  ]

  @Test func topLevelHelp() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    for flag in ["--help", "-h", "help"] {
      let result = try scratch.folio(flag)
      #expect(result.status == 0)
      #expect(result.stdout.contains("USAGE: folio [-C DIR] COMMAND"))
      for command in Self.commands { #expect(result.stdout.contains("  \(command) ")) }
    }
  }

  @Test(arguments: commands)
  func everyCommandHasHelp(_ command: String) throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let result = try scratch.folio(command, "--help")
    #expect(result.status == 0)
    #expect(result.stdout.contains("USAGE: folio \(command)"))
    #expect(result.stderr.isEmpty)
  }

  @Test(arguments: [
    ["frobnicate"], [], ["get", "todos"], ["get", "a", "b", "c"], ["apply", "todos", "a"],
    ["apply", "todos", "a", "--op", "destroy"], ["tables", "--bogus"], ["-C"],
  ])
  func usageErrorsExit64(_ arguments: [String]) throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    let result = try FolioRunner.run(arguments, in: scratch.path)
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("error: "))
    #expect(result.stderr.contains("Usage: folio"))
    #expect(result.stderr.contains("--help'."))
    #expect(result.stdout.isEmpty)
  }

  @Test func initIsIdempotent() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    let first = try scratch.folio("init")
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout.contains("Folio store at \(scratch.path)"))
    let attributes = scratch.read(".gitattributes")
    #expect(attributes?.contains("data/todos/*.json merge=folio") == true)
    let second = try scratch.folio("init")
    #expect(second.status == 0)
    #expect(second.stdout == first.stdout)
    #expect(scratch.read(".gitattributes") == attributes)
    let fresh = try CLIScratch(yaml: nil)
    defer { fresh.remove() }
    #expect(try fresh.folio("init", "sub").status == 0)
    #expect(fresh.read("sub/folio.yaml")?.contains("version: 1") == true)
    #expect(try fresh.folio("-C", "sub", "tables").status == 0)
  }

  @Test func putGetApplyRemove() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let put = try scratch.folio(
      "put", "todos", "a", "-", input: #"{"title": "Buy milk", "views": 1, "tags": ["x"]}"#)
    #expect(put.status == 0, "\(put.stderr)")
    let get = try scratch.folio("get", "todos", "a")
    #expect(get.status == 0)
    #expect(
      get.stdout
        == "{\n  \"id\": \"a\",\n  \"tags\": [\n    \"x\"\n  ],\n  \"title\": \"Buy milk\",\n  \"views\": 1\n}\n"
    )
    let apply = try scratch.folio(
      "apply", "todos", "a", "--op", "update", "--columns", #"{"done": true}"#,
      "--transforms",
      #"{"views": {"op": "increment", "by": "2147483647"}, "tags": {"op": "arrayUnion", "values": ["y"]}}"#)
    #expect(apply.status == 0, "\(apply.stderr)")
    let lines = apply.stdout.split(separator: "\n")
    #expect(
      lines == [
        #"{"path":"done","pk":"a","type":"set","value":true}"#,
        #"{"path":"tags","pk":"a","type":"unioned","values":["y"]}"#,
        #"{"by":2147483647,"path":"views","pk":"a","type":"incremented"}"#,
      ])
    #expect(try scratch.folio("get", "todos", "a").stdout.contains(#""views": "2147483648""#))
    let missing = try scratch.folio("apply", "todos", "zz", "--op", "update", "--columns", "{}")
    #expect(missing.status == 0 && missing.stdout.isEmpty)
    #expect(try scratch.folio("rm", "todos", "a").status == 0)
    let gone = try scratch.folio("get", "todos", "a")
    #expect(gone.status == 1)
    #expect(gone.stderr == "error: NOT_FOUND: no document 'a' in table 'todos'\n")
    #expect(try scratch.folio("rm", "todos", "a").status == 1)
    let log = try scratch.folio("log", "todos", "a")
    #expect(log.stdout.split(separator: "\n").map { $0.contains(#""op":"remove""#) } == [false, false, true])
  }

  @Test func malformedTransformChangesNoFile() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    try scratch.folio("apply", "todos", "a", "--op", "insert", "--columns", #"{"views": 1}"#)
    let before = scratch.read("data/todos/a.json")
    let logBefore = try scratch.folio("log").stdout
    for transform in [
      #"{"views": {"op": "increment", "by": 1.5}}"#, #"{"views": 3}"#, #"{"views": {"op": "explode"}}"#,
    ] {
      let result = try scratch.folio("apply", "todos", "a", "--op", "update", "--transforms", transform)
      #expect(result.status == 1)
      #expect(result.stderr.hasPrefix("error: LOCAL_CONSTRAINT: "), "\(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
    #expect(scratch.read("data/todos/a.json") == before)
    #expect(try scratch.folio("log").stdout == logBefore)
  }

  @Test func badJSONArgumentsAndFilesSayWhere() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let columns = try scratch.folio("apply", "todos", "a", "--op", "insert", "--columns", #"{"a": 1,}"#)
    // Text that is not JSON is a usage error (issue 13), with the position.
    #expect(columns.status == 64)
    #expect(columns.stderr.contains("--columns:1:8: error: trailing comma"), "\(columns.stderr)")
    try scratch.write("doc.json", "{\n  \"title\": \"x\"\n  \"views\": 2\n}\n")
    let put = try scratch.folio("put", "todos", "a", "doc.json")
    #expect(put.status == 1)
    #expect(put.stderr.hasPrefix("doc.json:3:3: error: "), "\(put.stderr)")
    // The line itself, with a caret under the column, as a compiler prints it.
    #expect(put.stderr.hasSuffix("\n  \"views\": 2\n  ^\n"), "\(put.stderr)")
    #expect(scratch.read("data/todos/a.json") == nil)
    let unsafe = try scratch.folio("put", "todos", "../escape", "-", input: "{}")
    #expect(unsafe.status == 1)
    #expect(unsafe.stderr.hasPrefix("error: INVALID_PK: "))
  }

  @Test func badConfigStopsEveryCommand() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos:\n    path: ../outside\n")
    defer { scratch.remove() }
    let result = try scratch.folio("init")
    #expect(result.status == 1)
    #expect(result.stderr.hasPrefix("folio.yaml:4:11: error: "), "\(result.stderr)")
    #expect(result.stderr.hasSuffix("\n    path: ../outside\n          ^\n"), "\(result.stderr)")
  }

  @Test func tablesListsCounts() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    for pk in ["a", "b", "c"] { try scratch.folio("apply", "todos", pk, "--op", "insert") }
    let text = try scratch.folio("tables")
    #expect(text.stdout == "TABLE  PATH        DOCUMENTS\ntodos  data/todos  3\n")
    let json = try scratch.folio("tables", "--json")
    #expect(json.stdout == #"{"documents":3,"key":"id","name":"todos","path":"data/todos"}"# + "\n")
  }

  @Test func fsckAndFmt() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    try scratch.folio("apply", "todos", "a", "--op", "insert")
    #expect(try scratch.folio("fsck").stdout == "checked 1 document in 1 table: ok\n")
    try scratch.write("data/todos/b.json", "{\"id\":\"b\",\n\"x\": [1,]}")
    let bad = try scratch.folio("fsck")
    #expect(bad.status == 1)
    #expect(bad.stderr.hasPrefix("data/todos/b.json:2:8: error: trailing comma"), "\(bad.stderr)")
    let fmtBad = try scratch.folio("fmt")
    #expect(fmtBad.status == 1)
    #expect(scratch.read("data/todos/b.json") == "{\"id\":\"b\",\n\"x\": [1,]}")
    try scratch.write("data/todos/b.json", "{\"x\": [1], \"id\":\"b\"}")
    #expect(try scratch.folio("fsck").status == 0)
    let fmt = try scratch.folio("fmt", "todos")
    #expect(fmt.status == 0)
    #expect(fmt.stdout == "data/todos/b.json\n")
    #expect(scratch.read("data/todos/b.json") == "{\n  \"id\": \"b\",\n  \"x\": [\n    1\n  ]\n}\n")
  }

  @Test func evictKeepsTheLogClean() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    try scratch.folio("apply", "todos", "a", "--op", "insert")
    #expect(try scratch.folio("evict", "todos", "a").status == 0)
    #expect(try scratch.folio("get", "todos", "a").status == 1)
    #expect(try scratch.folio("log").stdout.split(separator: "\n").count == 1)
    #expect(try scratch.folio("evict", "todos", "a").status == 1)
  }
}

extension CLITests {
  @Test func dashCRunsAsIfStartedThere() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    try scratch.write("store/folio.yaml", CLIScratch.yaml)
    try scratch.write("store/doc.json", #"{"id": "d", "v": 1}"#)
    #expect(try FolioRunner.run(["-C", "store", "init"], in: scratch.path).status == 0)
    let put = try FolioRunner.run(["-C", "store", "put", "todos", "doc.json"], in: scratch.path)
    #expect(put.status == 0, "\(put.stderr)")
    #expect(scratch.read("store/data/todos/d.json")?.contains("\"v\": 1") == true)
    let missing = try FolioRunner.run(["-C", "nowhere", "tables"], in: scratch.path)
    // A directory that is not there is a usage error (issue 13).
    #expect(missing.status == 64)
    #expect(missing.stderr.contains("nowhere"))
  }
}
