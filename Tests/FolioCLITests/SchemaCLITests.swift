import Folio
import FolioTestSupport
import Foundation
import Testing

/// JSON Schema per table through the built binary: a refused `put`, the
/// config errors, `folio schema` and `--infer`, `folio init --editor
/// vscode`, and a refused write over HTTP.
struct SchemaCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
        schema: schemas/todos.schema.json
        columns:
          views: counter
    """
  static let schema = """
    {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "type": "object",
      "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "views": {"type": "integer"}
      },
      "required": ["title"]
    }

    """

  func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    try scratch.write("schemas/todos.schema.json", Self.schema)
    try scratch.folio("init")
    return scratch
  }

  @Test func putIsRefusedWithTheDocumentAndSchemaPaths() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let refused = try scratch.folio("put", "todos", "a", input: #"{"id": "a", "views": "10"}"#)
    #expect(refused.status == 1)
    #expect(
      refused.stderr
        == "data/todos/a.json:3:12: error: views: expected integer, got string (schema todos.schema.json#/properties/views)\n"
        + "  \"views\": \"10\"\n" + String(repeating: " ", count: 11) + "^\n"
    )
    #expect(scratch.read("data/todos/a.json") == nil)
    #expect(try scratch.folio("put", "todos", "a", input: #"{"title": "t", "views": 10}"#).status == 0)
  }

  /// A pattern that backtracks catastrophically, and a title built to
  /// make it: a write is refused at once, and `status` and `fsck` finish
  /// on a document an editor (or a merge) put there. With a backtracking
  /// engine the 41-character title took minutes.
  @Test func aBacktrackingPatternFreezesNothing() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write(
      "schemas/todos.schema.json",
      #"{"properties": {"title": {"type": "string", "pattern": "^([a-zA-Z0-9]+\\s?)*$"}}}"#)
    let title = String(repeating: "a", count: 41) + "!"
    let refused = try scratch.folio("put", "todos", "a", input: #"{"title": "\#(title)"}"#)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("expected a string matching"), "\(refused.stderr)")
    #expect(try scratch.folio("put", "todos", "b", input: #"{"title": "fine words"}"#).status == 0)
    try scratch.write(
      "data/todos/c.json", #"{"id": "c", "title": "\#(String(repeating: "ab1", count: 2_000))!"}"#)
    let fsck = try scratch.folio("fsck")
    #expect(fsck.status == 1)
    #expect(fsck.stdout.contains("data/todos/c.json") || fsck.stderr.contains("data/todos/c.json"), "\(fsck)")
    #expect(try scratch.folio("status").status == 0)
    // Refused when the schema loads: lookaround needs backtracking.
    try scratch.write(
      "schemas/todos.schema.json", #"{"properties": {"title": {"pattern": "^(?!x)"}}}"# + "\n")
    let lookahead = try scratch.folio("get", "todos", "b")
    #expect(lookahead.status == 1)
    #expect(
      lookahead.stderr.contains(
        "schemas/todos.schema.json:1:38: error: 'pattern' is not a regular expression Folio can read: lookaround"
      ),
      "\(lookahead.stderr)")
  }

  /// The check runs before the store lock is taken: with the lock held by
  /// another process (`flock`, as a long write holds it), a document that
  /// breaks the schema is refused for what it is, where waiting for the
  /// lock would end in `LOCKED`.
  @Test func aBadDocumentIsRefusedWithoutWaitingForTheLock() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("put", "todos", "a", input: #"{"title": "t"}"#).status == 0)
    let holder = Process()
    // One process, so that killing it lets the lock go.
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    holder.arguments = [
      "-c",
      "import fcntl, signal, sys\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\nsignal.pause()",
      scratch.path + "/.git/folio/lock",
    ]
    let out = Pipe()
    holder.standardOutput = out
    try holder.run()
    defer {
      kill(holder.processIdentifier, SIGKILL)
      holder.waitUntilExit()
    }
    // Wait for the state: the lock is held once the child says so.
    _ = out.fileHandleForReading.readData(ofLength: 5)
    let result = try FolioRunner.run(
      ["put", "todos", "b"], in: scratch.path, input: #"{"views": "ten"}"#,
      environment: ["FOLIO_LOCK_TIMEOUT": "30"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("expected integer, got string"), "\(result.stderr)")
    #expect(scratch.read("data/todos/b.json") == nil)
  }

  /// The schema file folio.yaml names is committed with it, so a clone can
  /// check writes; a clone of a store whose schema was never committed
  /// (made by an older build) still opens, reads, and says what is wrong.
  @Test func schemaFilesTravelWithFolioYaml() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("put", "todos", "a", input: #"{"title": "t", "views": 1}"#).status == 0)
    #expect(try scratch.folio("commit", "-m", "first").status == 0)
    let tracked = try FolioRunner.shellOutput("git ls-files schemas", in: scratch.path).output
    #expect(tracked == "schemas/todos.schema.json\n")
    #expect(
      try FolioRunner.shell(
        "git init -q --bare ../\(URL(fileURLWithPath: scratch.path).lastPathComponent).git", in: scratch.path)
        == 0)
    let remote = scratch.path + ".git"
    defer { try? FileManager.default.removeItem(atPath: remote) }
    #expect(try FolioRunner.shell("git push -q \(remote) HEAD:main", in: scratch.path) == 0)
    let clone = try FolioRunner.run(["clone", remote, scratch.path + "-clone"], in: "/")
    defer { try? FileManager.default.removeItem(atPath: scratch.path + "-clone") }
    #expect(clone.status == 0, "\(clone.stderr)")
    let refused = try FolioRunner.run(
      ["put", "todos", "b", "-"], in: scratch.path + "-clone", input: #"{"views": 1}"#)
    #expect(refused.status == 1 && refused.stderr.contains("required, but missing"), "\(refused.stderr)")

    // The schema removed from the history, as an older build left it.
    #expect(
      try FolioRunner.shell(
        "git rm -q --cached schemas/todos.schema.json && git commit -q -m drop && git push -q \(remote) HEAD:main",
        in: scratch.path) == 0)
    let bare = scratch.path + "-bare"
    defer { try? FileManager.default.removeItem(atPath: bare) }
    let old = try FolioRunner.run(["clone", remote, bare], in: "/")
    #expect(old.status == 0, "\(old.stderr)")
    #expect(try FolioRunner.run(["get", "todos", "a"], in: bare).status == 0)
    let write = try FolioRunner.run(["put", "todos", "c", "-"], in: bare, input: #"{"title": "c"}"#)
    #expect(write.status == 1)
    #expect(
      write.stderr.contains("schema file 'schemas/todos.schema.json' of table 'todos' does not exist"),
      "\(write.stderr)")
    let fsck = try FolioRunner.run(["fsck"], in: bare)
    #expect(
      fsck.status == 1 && (fsck.stdout + fsck.stderr).contains("does not exist"),
      "\(fsck.stdout)\(fsck.stderr)")
    let status = try FolioRunner.run(["status"], in: bare)
    #expect((status.stdout + status.stderr).contains("does not exist"), "\(status.stdout)\(status.stderr)")
  }

  @Test func aFailedCloneLeavesNoFolder() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    #expect(
      try FolioRunner.shell(
        "git init -q --bare plain.git && git init -q work && cd work && echo hi > a && git add a && git -c user.name=t -c user.email=t@t commit -q -m a && git push -q ../plain.git HEAD:main",
        in: scratch.path) == 0)
    let clone = try FolioRunner.run(["clone", scratch.path + "/plain.git", "copy"], in: scratch.path)
    #expect(clone.status == 1)
    #expect(clone.stderr.contains("has no folio.yaml"), "\(clone.stderr)")
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/copy"))
    let missing = try FolioRunner.run(
      ["clone", scratch.path + "/nothing-here.git", "copy2"], in: scratch.path)
    #expect(missing.status == 1)
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/copy2"))
  }

  @Test func schemaPrintsTheFileAndInferProposesOne() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let printed = try scratch.folio("schema", "todos")
    #expect(printed.status == 0 && printed.stdout == Self.schema)
    for (pk, status) in [("a", "open"), ("b", "done"), ("c", "open")] {
      try scratch.folio("put", "todos", pk, input: #"{"title": "t", "status": "\#(status)", "views": 1}"#)
    }
    let proposal = try scratch.folio("schema", "todos", "--infer")
    #expect(proposal.status == 0)
    let value = try JSONValue(parsing: proposal.stdout)
    #expect(value["properties"]?["status"]?["enum"] == ["done", "open"])
    #expect(value["properties"]?["views"]?["type"] == ["integer", "string"])
    #expect(value["required"] == ["id", "status", "title", "views"])
    // Saved over the file, the proposal is in effect.
    try scratch.write("schemas/todos.schema.json", proposal.stdout)
    let refused = try scratch.folio(
      "put", "todos", "d", input: #"{"title": "t", "status": "mid", "views": 1}"#)
    #expect(
      refused.stderr.contains(#"status: expected one of "done", "open", got "mid""#), "\(refused.stderr)")

    let none = try CLIScratch()
    defer { none.remove() }
    try none.folio("init")
    let missing = try none.folio("schema", "todos")
    #expect(missing.status == 1 && missing.stderr.contains("table 'todos' has no schema"))
    #expect(try none.folio("schema").status == 64)
  }

  @Test func aBadSchemaStopsEveryCommandWithItsPosition() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("schemas/todos.schema.json", "{\n  \"type\": \"object\",\n  \"uniqueItems\": true\n}\n")
    let result = try scratch.folio("get", "todos", "a")
    #expect(result.status == 1)
    #expect(
      result.stderr.hasPrefix("schemas/todos.schema.json:3:3: error: unsupported keyword 'uniqueItems'"))
    try scratch.write("schemas/todos.schema.json", #"{"properties": {"views": {"type": "string"}}}"#)
    let kinds = try scratch.folio("status")
    #expect(kinds.status == 1)
    #expect(kinds.stderr.hasPrefix("folio.yaml:7:7: error: column 'views' of table 'todos' is a counter"))
  }

  @Test func initWritesVSCodeMappingsMergedIntoTheSettings() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write(
      ".vscode/settings.json",
      #"{"editor.tabSize": 2, "json.schemas": [{"fileMatch": ["/other/*.json"], "url": "./o.json"}, {"fileMatch": ["/data/todos/*.json"], "url": "./old.json"}]}"#
    )
    let result = try scratch.folio("init", "--editor", "vscode")
    #expect(result.status == 0 && result.stdout.contains(".vscode/settings.json: json.schemas maps todos"))
    let settings = try JSONValue(parsing: scratch.read(".vscode/settings.json") ?? "")
    #expect(settings["editor.tabSize"] == 2)
    #expect(
      settings["json.schemas"] == [
        ["fileMatch": ["/other/*.json"], "url": "./o.json"],
        ["fileMatch": ["/data/todos/*.json"], "url": "./schemas/todos.schema.json"],
      ])
    // Again: the same file.
    let before = scratch.read(".vscode/settings.json")
    try scratch.folio("init", "--editor", "vscode")
    #expect(scratch.read(".vscode/settings.json") == before)
    #expect(try scratch.folio("init", "--editor", "vim").status == 64)
    // Comments (allowed by VS Code) are not dropped: nothing is written.
    try scratch.write(".vscode/settings.json", "{\n  // mine\n}\n")
    let refused = try scratch.folio("init", "--editor", "vscode")
    #expect(refused.status == 1 && refused.stderr.hasPrefix(".vscode/settings.json:2:3: error:"))
  }

  @Test func serveAnswers400WithTheViolation() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let server = try ServeCLITests.Server(in: scratch.path)
    defer { _ = server.stop() }
    let reply = try ServeCLITests.curl("PUT", server.base + "/todos/a.json", body: #"{"views": 1}"#)
    #expect(reply.status == 400)
    #expect(
      reply.json?["error"]
        == "data/todos/a.json:1:1: error: title: required, but missing (schema todos.schema.json#)")
    #expect(scratch.read("data/todos/a.json") == nil)
    let fine = try ServeCLITests.curl("PATCH", server.base + "/todos/a.json", body: #"{"title": "t"}"#)
    #expect(fine.status == 200)
  }
}
