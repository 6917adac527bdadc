import Folio
import FolioCore
import FolioTestSupport
import Foundation
import Testing

/// Tables made from the command line: `folio tables add/rm`, `folio import
/// --create`, `folio init --table`, and UNKNOWN_TABLE errors that say what
/// to run.
@Suite struct TablesCLITests {
  /// A hand-written folio.yaml: four-space indentation, comments everywhere,
  /// a section after `tables:` with its own comment.
  static let handWritten = """
    # Our store. Edit with care.
    version: 1

    tables:
        # Things to do.
        todos:
            path: data/todos   # where they live
            order: [due]

        notes:
            path: notes
            # no columns yet

    # Pull every minute while an app subscribes.
    sync:
      pull-every: 1m
    """

  func store(_ yaml: String? = TablesCLITests.handWritten) throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: yaml)
    #expect(try scratch.folio("init").status == 0)
    return scratch
  }

  @Test func addKeepsCommentsAndLayoutAndTheResultLoads() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let result = try scratch.folio(
      "tables", "add", "people", "--order", "age,name", "--counter", "visits", "--set", "tags")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout == """
        added table 'people' to folio.yaml:
            people:
              path: data/people
              key: id
              order: [age, name]
              layout: nested
              columns:
                tags: set
                visits: counter

        """)
    let text = try #require(scratch.read("folio.yaml"))
    #expect(
      text == """
        # Our store. Edit with care.
        version: 1

        tables:
            # Things to do.
            todos:
                path: data/todos   # where they live
                order: [due]

            notes:
                path: notes
                # no columns yet
            people:
              path: data/people
              key: id
              order: [age, name]
              layout: nested
              columns:
                tags: set
                visits: counter

        # Pull every minute while an app subscribes.
        sync:
          pull-every: 1m

        """)
    let config = try Config(yaml: text)
    #expect(config.tables.map(\.name) == ["todos", "notes", "people"])
    #expect(config.table(named: "people")?.columns == ["visits": .counter, "tags": .set])
    #expect(config.sync.pullEvery == .seconds(60))
    #expect(FileManager.default.fileExists(atPath: scratch.path + "/data/people"))
    // A nested table's files are two levels down.
    #expect(scratch.read(".gitattributes")?.contains("data/people/*/*/*.json merge=folio") == true)
    #expect(config.table(named: "people")?.layout == .nested)
    let listed = try scratch.folio("tables")
    #expect(listed.stdout.contains("people  data/people  0"), "\(listed.stdout)")
  }

  @Test func addToAFreshStoreReplacesTheEmptyFlowMapping() throws {
    let scratch = try store(nil)
    defer { scratch.remove() }
    #expect(scratch.read("folio.yaml") == "version: 1\ntables: {}\n")
    #expect(try scratch.folio("tables", "add", "todos").status == 0)
    #expect(
      scratch.read("folio.yaml")
        == "version: 1\ntables:\n  todos:\n    path: data/todos\n    key: id\n    order: []\n    layout: nested\n"
    )
  }

  @Test func clashesAreRefusedAtTheirPositionAndNothingIsWritten() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let cases: [([String], String)] = [
      (
        ["todos"],
        "folio.yaml:6:5: error: table 'todos' already exists; remove it first, or pick another name\nTo remove it: folio tables rm todos\n"
      ),
      (
        ["tasks", "--path", "data/todos"],
        "folio.yaml:7:15: error: the folder 'data/todos' is already the folder of table 'todos'; give the new table another --path\n"
      ),
      (
        ["old", "--path", "data/todos/old"],
        "folio.yaml:7:15: error: the folder 'data/todos/old' would lie inside 'data/todos', the folder of table 'todos'; give the new table another --path\n"
      ),
      (
        ["everything", "--path", "data"],
        "folio.yaml:7:15: error: the folder 'data' would contain 'data/todos', the folder of table 'todos'; give the new table another --path\n"
      ),
      (
        [""],
        "error: INVALID_CONFIG: table name must not be empty\n"
      ),
      (
        [".."],
        "error: INVALID_CONFIG: invalid table name '..': use letters, digits, '_', '-' and '.', and do not start with '.' or '-'\n"
      ),
      (
        ["a/b"],
        "error: INVALID_CONFIG: invalid table name 'a/b': use letters, digits, '_', '-' and '.', and do not start with '.' or '-'\n"
      ),
      (
        ["up", "--path", "../outside"],
        "error: INVALID_CONFIG: path '../outside' of table 'up' leaves the store\n"
      ),
    ]
    let before = scratch.read("folio.yaml")
    for (arguments, message) in cases {
      let result = try FolioRunner.run(["tables", "add"] + arguments, in: scratch.path)
      #expect(result.status == 1, "\(arguments)")
      #expect(result.stderr == message, "\(arguments)")
      #expect(scratch.read("folio.yaml") == before, "\(arguments): nothing written")
    }
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/outside"))
  }

  @Test func aFlowStyleTablesMappingIsLeftToTheUser() throws {
    let scratch = try store("version: 1\ntables: {todos: {path: t}}\n")
    defer { scratch.remove() }
    let result = try scratch.folio("tables", "add", "people")
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "folio.yaml:2:9: error: 'tables' is written in flow style ({…}); write it as a block (one table per line), so that tables can be added and removed in place\n"
    )
  }

  @Test func rmRemovesTheEntryAndKeepsTheDocuments() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("put", "todos", "a", input: #"{"title": "keep me"}"#).status == 0)
    #expect(try scratch.folio("commit").status == 0)
    let result = try scratch.folio("tables", "rm", "todos")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout
        == "removed table 'todos' from folio.yaml; its folder data/todos/ and its documents are still there (delete them yourself if you no longer want them)\n"
    )
    #expect(scratch.read("data/todos/a.json")?.contains("keep me") == true)
    let text = try #require(scratch.read("folio.yaml"))
    #expect(!text.contains("todos"))
    #expect(text.contains("# Things to do.") == false, "the entry's own comment lines go with it")
    #expect(text.contains("notes:") && text.contains("# Pull every minute"))
    #expect(try Config(yaml: text).tables.map(\.name) == ["notes"])
    #expect(scratch.read(".gitattributes")?.contains("data/todos") == false)
    #expect(try scratch.folio("tables", "rm", "notes").status == 0)
    #expect(try Config(yaml: try #require(scratch.read("folio.yaml"))).tables.isEmpty)

    let missing = try scratch.folio("tables", "rm", "todos")
    #expect(missing.status == 1)
    #expect(
      missing.stderr
        == "error: UNKNOWN_TABLE: no table 'todos' in folio.yaml. There are no tables yet.\nTo add it: folio tables add todos\n"
    )
  }

  @Test(arguments: [true, false]) func importCreateMakesTheTable(csv: Bool) throws {
    for withID in [true, false] {
      let scratch = try store(nil)
      defer { scratch.remove() }
      let file = csv ? "people.csv" : "people.ndjson"
      let text =
        csv
        ? (withID ? "id,name,age\np1,Ann,30\np2,Bob,40\n" : "name,age\nAnn,30\nBob,40\n")
        : (withID
          ? "{\"id\": \"p1\", \"name\": \"Ann\"}\n{\"id\": \"p2\", \"name\": \"Bob\"}\n"
          : "{\"name\": \"Ann\"}\n{\"name\": \"Bob\"}\n")
      try scratch.write(file, text)
      let imported = try scratch.folio("import", "people", file, "--create", "--order", "name")
      #expect(imported.status == 0, "\(imported.stderr)")
      #expect(
        imported.stderr
          == "created table 'people' in folio.yaml:\n  people:\n    path: data/people\n    key: id\n    order: [name]\n    layout: nested\n"
      )
      #expect(imported.stdout.hasPrefix("imported 2 row(s) into people: 2 created"))
      let rows = try scratch.folio("query", "people").stdout.split(separator: "\n")
      #expect(rows.count == 2)
      if withID {
        #expect(rows[0].contains(#""id":"p1""#))
      } else {
        let pk = try #require(rows[0].firstMatch(of: #/"id":"([0-9a-z]{26})"/#)).output.1
        #expect(
          FileManager.default.fileExists(atPath: scratch.path + "/" + newTableFile("data/people", String(pk)))
        )
      }
      #expect(
        try FolioRunner.shellOutput("git status --porcelain -- folio.yaml data", in: scratch.path).output
          .isEmpty)
    }
  }

  /// A missing file, a file that is not a SQLite database, a bad CSV row
  /// and a SQLite real JSON cannot hold: the import fails, and
  /// `folio.yaml`, `.gitattributes` and the folders are as they were.
  @Test(arguments: [
    ("missing.csv", nil, "missing.csv"),
    ("broken.db", "SQLite format 3\u{0}" + String(repeating: "x", count: 200), "broken.db"),
    ("bad.csv", "id,name\np1,Ann\np2\n", "bad.csv:3:1: error: row has 1 field but the header has 2"),
    ("inf.db", nil, "inf.db:2:2: error: column 'x' holds +Inf, which JSON cannot hold"),
  ])
  func aFailedImportCreateChangesNothing(file: String, text: String?, message: String) throws {
    let scratch = try store(nil)
    defer { scratch.remove() }
    if let text { try scratch.write(file, text) }
    if file == "inf.db" {
      #expect(
        try FolioRunner.shell(
          "sqlite3 inf.db \"CREATE TABLE t(id TEXT, x REAL); INSERT INTO t VALUES ('a', 1.5), ('b', 9e999), ('c', -9e999);\"",
          in: scratch.path) == 0)
    }
    let before = try FolioRunner.shellOutput(
      "cat folio.yaml .gitattributes; find . -path ./.git -prune -o -print | sort", in: scratch.path
    ).output
    let imported = try scratch.folio("import", "people", file, "--create")
    #expect(imported.status == 1)
    #expect(imported.stderr.contains(message), "\(imported.stderr)")
    #expect(imported.stderr.contains("the table 'people' was not added"), "\(imported.stderr)")
    let after = try FolioRunner.shellOutput(
      "cat folio.yaml .gitattributes; find . -path ./.git -prune -o -print | sort", in: scratch.path
    ).output
    #expect(after == before)
    if file == "inf.db" {
      // With --continue the rows JSON can hold are imported, the others said.
      let kept = try scratch.folio("import", "people", file, "--create", "--continue")
      #expect(kept.status == 0, "\(kept.stderr)")
      #expect(
        kept.stderr.contains("inf.db:3:2: error: column 'x' holds -Inf, which JSON cannot hold"),
        "\(kept.stderr)")
      #expect(try scratch.folio("query", "people").stdout.split(separator: "\n").count == 1)
    }
  }

  @Test func importWithAPkColumnMakesItTheKey() throws {
    let scratch = try store(nil)
    defer { scratch.remove() }
    try scratch.write("codes.csv", "code,name\nAA,American\nDL,Delta\n")
    #expect(try scratch.folio("import", "carriers", "codes.csv", "--create", "--pk", "code").status == 0)
    #expect(
      try Config(yaml: try #require(scratch.read("folio.yaml"))).table(named: "carriers")?.key == "code")
    #expect(try scratch.folio("get", "carriers", "DL").stdout.contains("Delta"))
  }

  @Test func unknownTableErrorsTeach() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("rows.ndjson", "{\"id\": \"a\"}\n")
    let hint =
      "no table 'todo' in folio.yaml; did you mean 'todos'? Tables are: notes, todos.\nTo add it: folio tables add todo"
    let cases: [[String]] = [
      ["put", "todo", "a"], ["apply", "todo", "a", "--op", "insert", "--columns", "{}"], ["query", "todo"],
      ["get", "todo", "a"], ["observe", "todo", "a"],
    ]
    for arguments in cases {
      let result = try FolioRunner.run(arguments, in: scratch.path, input: "{}")
      #expect(result.status == 1, "\(arguments)")
      #expect(result.stderr == "error: UNKNOWN_TABLE: \(hint)\n", "\(arguments)")
    }
    let imported = try scratch.folio("import", "todo", "rows.ndjson")
    #expect(imported.status == 1)
    #expect(
      imported.stderr
        == "error: UNKNOWN_TABLE: \(hint)\nOr create it as you import: folio import todo rows.ndjson --create\n"
    )
    let far = try scratch.folio("query", "people")
    #expect(
      far.stderr
        == "error: UNKNOWN_TABLE: no table 'people' in folio.yaml. Tables are: notes, todos.\nTo add it: folio tables add people\n"
    )
  }

  @Test func initWithTablesMakesThemInOneStep() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let result = try scratch.folio("init", "--table", "todos", "--table", "notes:docs/notes")
    #expect(result.status == 0, "\(result.stderr)")
    let config = try Config(yaml: try #require(scratch.read("folio.yaml")))
    #expect(config.tables.map { "\($0.name):\($0.path)" } == ["todos:data/todos", "notes:docs/notes"])
    #expect(FileManager.default.fileExists(atPath: scratch.path + "/docs/notes"))
    // Safe to rerun.
    let again = try scratch.folio("init", "--table", "todos")
    #expect(again.status == 0)
    #expect(try Config(yaml: try #require(scratch.read("folio.yaml"))) == config)
    // Three commands from an empty folder to a queried, committed table.
    try scratch.write("people.csv", "id,name\np1,Ann\n")
    #expect(try scratch.folio("import", "people", "people.csv", "--create").status == 0)
    #expect(try scratch.folio("query", "people").stdout == "{\"id\":\"p1\",\"name\":\"Ann\"}\n")
  }
}
