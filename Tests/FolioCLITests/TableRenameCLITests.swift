import FolioCore
import FolioTestSupport
import Foundation
import Testing

/// `folio tables rename`: one commit that renames the table and moves its
/// folder, which other replicas take by sync, also while they still write
/// under the old name.
@Suite struct TableRenameCLITests {
  typealias Sandbox = GitPullTests.Sandbox

  @Test func renameIsOneCommitThatMovesTheFolder() throws {
    let scratch = try CLIScratch(
      yaml:
        "# store\nversion: 1\ntables:\n  todos:\n    path: data/todos   # here\n    order: [due]\n  notes:\n    path: data/notes\n"
    )
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    for i in 1...3 {
      #expect(try scratch.folio("put", "todos", "p\(i)", input: #"{"due": \#(i)}"#).status == 0)
    }
    #expect(try scratch.folio("commit").status == 0)
    // Pending when renamed: committed first.
    #expect(try scratch.folio("put", "todos", "p4", input: #"{"due": 4}"#).status == 0)
    let result = try scratch.folio("tables", "rename", "todos", "tasks")
    #expect(result.status == 0, "\(result.stderr)")
    let commit = try scratch.git("rev-parse --short=12 HEAD").trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(
      result.stdout
        == "renamed table 'todos' to 'tasks' in folio.yaml, moved data/todos/ to data/tasks/; committed \(commit)\n"
    )
    #expect(
      scratch.read("folio.yaml")
        == "# store\nversion: 1\ntables:\n  tasks:\n    path: data/tasks   # here\n    order: [due]\n    renamed-from: [todos]\n  notes:\n    path: data/notes\n"
    )
    #expect(scratch.read(".gitattributes")?.contains("data/tasks/*.json merge=folio diff=folio") == true)
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/data/todos"))
    #expect(try scratch.git("status --porcelain").isEmpty)
    let moved = try scratch.git("show --stat --format=%s HEAD")
    #expect(moved.hasPrefix("folio: rename table 'todos' to 'tasks'"), "\(moved)")
    #expect(moved.contains("data/{todos => tasks}/p4.json"), "\(moved)")
    #expect(try scratch.git("show HEAD~1:data/todos/p4.json").contains("\"due\": 4"), "p4 committed first")
    let rows = try scratch.folio("query", "tasks", "--where", "due > 2")
    #expect(rows.status == 0)
    #expect(rows.stdout == "{\"due\":3,\"id\":\"p3\"}\n{\"due\":4,\"id\":\"p4\"}\n")
    let index = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/.git/folio/index")
    #expect(index.contains("t-tasks.base") && !index.contains("t-todos.base"), "\(index)")
  }

  @Test(arguments: [
    (["notes", "x"], "error: UNKNOWN_TABLE: no table 'notes' in folio.yaml"),
    (["todos", "done"], "folio.yaml:5:3: error: table 'done' already exists; pick another name\n"),
    (["todos", "a/b"], "error: INVALID_CONFIG: invalid table name 'a/b'"),
  ])
  func refusalsChangeNothing(arguments: [String], message: String) throws {
    let scratch = try CLIScratch(
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n  done:\n    path: data/done\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("put", "todos", "a", input: "{}").status == 0)
    #expect(try scratch.folio("commit").status == 0)
    let head = try scratch.git("rev-parse HEAD")
    let result = try FolioRunner.run(["tables", "rename"] + arguments, in: scratch.path)
    #expect(result.status == 1)
    #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
    #expect(try scratch.git("rev-parse HEAD") == head)
    #expect(try scratch.git("status --porcelain").isEmpty)
  }

  /// A broken file of the table, or files where the folder goes: refused,
  /// with the reason, and nothing is renamed.
  @Test func whatStandsInTheWayIsNamed() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("put", "todos", "a", input: "{}").status == 0)
    #expect(try scratch.folio("commit").status == 0)
    let head = try scratch.git("rev-parse HEAD")
    try scratch.write("data/todos/bad.json", #"{"x": 1,,}"#)
    let broken = try scratch.folio("tables", "rename", "todos", "tasks")
    #expect(broken.status == 1)
    #expect(
      broken.stderr
        == "error: WOULD_OVERWRITE: table 'todos' has a file that cannot be committed (data/todos/bad.json:1:9: error: expected an object key after ',', found ','); fix or remove it, then rename\n"
    )
    try FileManager.default.removeItem(atPath: scratch.path + "/data/todos/bad.json")
    try scratch.write("data/tasks/notes.txt", "mine\n")
    let occupied = try scratch.folio("tables", "rename", "todos", "tasks")
    #expect(occupied.status == 1)
    #expect(
      occupied.stderr
        == "error: WOULD_OVERWRITE: data/tasks: the folder 'data/tasks' is not empty; move what is there aside, then rename\n"
    )
    #expect(try scratch.git("rev-parse HEAD") == head)
    #expect(try Config(yaml: try #require(scratch.read("folio.yaml"))).table(named: "todos") != nil)
    #expect(scratch.read("data/tasks/notes.txt") == "mine\n")
  }

  /// Conflict records name the table: open ones are settled first.
  @Test func openConflictsAreSettledFirst() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"title": "start"}"#])
    let title = { (text: String) in
      ["apply", "todos", "t", "--op", "update", "--columns", #"{"title": "\#(text)"}"#]
    }
    try box.folio(title("from r0"), in: "r0")
    try box.folio(["sync"], in: "r0")
    waitForNextMillisecond()
    try box.folio(title("from r1"), in: "r1")
    try box.folio(["sync"], in: "r1")
    let refused = try FolioRunner.run(["tables", "rename", "todos", "tasks"], in: box.root.path + "/r1")
    #expect(refused.status == 1)
    #expect(
      refused.stderr
        == "error: CONFLICT: table 'todos' has 1 open conflict(s); settle them first (see 'folio conflicts todos'), then rename\n"
    )
    try box.folio(["conflicts", "resolve", "todos", "t", "title", "--keep"], in: "r1")
    try box.folio(["tables", "rename", "todos", "tasks"], in: "r1")
  }

  @Test func aMissingNameIsAUsageError() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let result = try scratch.folio("tables", "rename", "todos")
    #expect(result.status == 64)
    #expect(
      result.stderr.hasPrefix("error: missing argument\nUsage: folio tables [--json]"), "\(result.stderr)")
    #expect(result.stderr.contains("folio tables rename OLD NEW"))
    let help = try scratch.folio("tables", "rename", "--help")
    #expect(help.status == 0)
    #expect(help.stdout.contains("'rename' commits what is pending"))
  }

  @Test func aRenamedNameIsNotTakenAgain() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("put", "todos", "a", input: "{}").status == 0)
    #expect(try scratch.folio("tables", "rename", "todos", "tasks").status == 0)
    let again = try scratch.folio("tables", "rename", "tasks", "todos")
    #expect(again.status == 1)
    #expect(
      again.stderr
        == "folio.yaml:3:3: error: 'todos' is a former name of table 'tasks' (its 'renamed-from'), and ops recorded under it belong to that table; pick another name\n"
    )
    let add = try scratch.folio("tables", "add", "todos")
    #expect(add.status == 1, "\(add.stdout)")
  }

  /// r0 renames `todos` to `tasks` and pushes; r1, which had not seen it,
  /// edits a document under the old name meanwhile. Both sync, in `order`,
  /// and end with the same tables: r1's edit lands in the renamed table.
  @Test(arguments: ["rename first", "edit first"])
  func aReplicaThatWritesUnderTheOldNameConverges(order: String) throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["a"], "title": "x"}"#, "u": #"{"title": "u"}"#])
    let edit = [
      "apply", "todos", "t", "--op", "update", "--columns", #"{"title": "y"}"#, "--transforms",
      #"{"views": {"op": "increment", "by": 5}, "tags": {"op": "arrayUnion", "values": ["b"]}}"#,
    ]
    if order == "rename first" {
      try box.folio(["tables", "rename", "todos", "tasks"], in: "r0")
      try box.folio(["sync"], in: "r0")
      try box.folio(edit, in: "r1")
      try box.folio(["commit"], in: "r1")
      try box.folio(["sync"], in: "r1")
      try box.folio(["sync"], in: "r0")
    } else {
      try box.folio(edit, in: "r1")
      try box.folio(["sync"], in: "r1")
      try box.folio(["tables", "rename", "todos", "tasks"], in: "r0")
      try box.folio(["put", "tasks", "v", "-"], in: "r0", input: #"{"title": "v"}"#)
      try box.folio(["sync"], in: "r0")
      try box.folio(["sync"], in: "r1")
    }
    for replica in ["r0", "r1"] {
      let t = try #require(box.file(replica + "/tasks/t.json"), "\(order): \(replica)")
      #expect(t.contains("\"views\": 6") && t.contains("\"title\": \"y\""), "\(order): \(replica): \(t)")
      #expect(t.contains("\"b\""), "\(order): \(replica): \(t)")
      #expect(
        !FileManager.default.fileExists(atPath: box.root.path + "/\(replica)/todos"), "\(order): \(replica)")
      let rows = try box.folio(["query", "tasks"], in: replica).stdout
      #expect(
        rows.split(separator: "\n").count == (order == "rename first" ? 2 : 3),
        "\(order): \(replica): \(rows)")
      #expect(try box.git("diff --quiet HEAD", in: replica) == 0, "\(order): \(replica)")
      // r1's op names the table as it was; the log finds it under the new name.
      let log = try box.folio(["log", "tasks", "t"], in: replica).stdout
      #expect(
        log.contains(#""title":"y""#) && log.contains(#""table":"todos""#), "\(order): \(replica): \(log)")
    }
    #expect(box.file("r0/tasks/t.json") == box.file("r1/tasks/t.json"))
    let trees = try ["r0", "r1"].map {
      try FolioRunner.shellOutput("git rev-parse HEAD:tasks", in: box.root.path + "/" + $0).output
    }
    #expect(trees[0] == trees[1], "\(order): the same table, byte for byte")
    #expect(box.file("r0/folio.yaml") == box.file("r1/folio.yaml"))
  }

  /// The same through plain `git pull`, which calls `folio merge-driver`:
  /// counters edited on both sides, one side before its rename, add up.
  /// Pulled by the replica that renamed, the driver merges; pulled by the
  /// other, git stops on the file, and `folio sync` concludes it.
  @Test(arguments: ["renamer pulls", "other pulls"])
  func plainGitPullAcrossARenameMergesByOps(order: String) throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["a"], "title": "x"}"#])
    let pull = "-c user.name=t -c user.email=t@t pull -q --no-rebase --no-edit origin main"
    let increment = { (by: Int) in
      [
        "apply", "todos", "t", "--op", "update", "--transforms",
        #"{"views": {"op": "increment", "by": \#(by)}}"#,
      ]
    }
    if order == "renamer pulls" {
      try box.folio(increment(5), in: "r1")
      try box.folio(["commit"], in: "r1")
      #expect(try box.git("push -q origin main", in: "r1") == 0)
      try box.folio(increment(100), in: "r0")
      try box.folio(["tables", "rename", "todos", "tasks"], in: "r0")
      #expect(try box.git(pull, in: "r0") == 0)
      try box.folio(["sync"], in: "r0")
      try box.folio(["sync"], in: "r1")
    } else {
      try box.folio(increment(100), in: "r0")
      try box.folio(["tables", "rename", "todos", "tasks"], in: "r0")
      try box.folio(["sync"], in: "r0")
      try box.folio(increment(5), in: "r1")
      try box.folio(["commit"], in: "r1")
      // git takes the merge driver from r1's .gitattributes, which routes
      // the old folder only: git's line merge stops on tasks/t.json, and
      // folio sync concludes the stopped merge by replay.
      #expect(try box.git(pull, in: "r1") != 0)
      try box.folio(["sync"], in: "r1")
      try box.folio(["sync"], in: "r0")
    }
    for replica in ["r0", "r1"] {
      let t = try #require(box.file(replica + "/tasks/t.json"), "\(order): \(replica)")
      #expect(t.contains("\"views\": 106"), "\(order): \(replica): \(t)")
      #expect(
        !FileManager.default.fileExists(atPath: box.root.path + "/\(replica)/todos"), "\(order): \(replica)")
      #expect(try box.git("diff --quiet HEAD", in: replica) == 0, "\(order): \(replica)")
    }
    #expect(box.file("r0/tasks/t.json") == box.file("r1/tasks/t.json"))
  }
}
