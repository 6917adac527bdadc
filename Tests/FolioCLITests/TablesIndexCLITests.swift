import FolioCore
import FolioTestSupport
import Foundation
import Testing

/// `folio tables index add|rm|list`: indexes without hand-edited YAML.
@Suite struct TablesIndexCLITests {
  /// Every shape `indexes:` takes by hand: absent, a block list with a
  /// comment, and a key with nothing after it but a comment.
  static let yaml = """
    # Our store.
    version: 1

    tables:
        # Things to do.
        todos:
            path: data/todos   # where they live
            order: [due]

        notes:
            path: notes
            indexes:
              - a
              - b   # bee

        flights:
            indexes:    # none yet

    sync:
      pull-every: 1m
    """

  func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    for (pk, owner) in [("t1", "ann"), ("t2", "bob"), ("t3", "ann")] {
      let put = try scratch.folio("put", "todos", pk, input: #"{"owner": "\#(owner)", "due": 1}"#)
      #expect(put.status == 0, "\(put.stderr)")
    }
    return scratch
  }

  @Test func addWritesTheListInPlaceAndBuildsTheIndex() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let added = try scratch.folio("tables", "index", "add", "todos", "owner")
    #expect(added.status == 0, "\(added.stderr)")
    #expect(
      added.stdout == "added index owner to table 'todos' in folio.yaml and built it over 3 document(s)\n")
    #expect(added.stderr.isEmpty)
    #expect(try scratch.folio("tables", "index", "add", "notes", "c").status == 0)
    #expect(try scratch.folio("tables", "index", "add", "flights", "`dep time`").status == 0)
    #expect(try scratch.folio("tables", "index", "add", "todos", "meta.`a.b`").status == 0)
    #expect(
      scratch.read("folio.yaml") == """
        # Our store.
        version: 1

        tables:
            # Things to do.
            todos:
                path: data/todos   # where they live
                order: [due]
                indexes: [owner, "meta.a~1b"]

            notes:
                path: notes
                indexes:
                  - a
                  - b   # bee
                  - c

            flights:
                indexes: ["dep time"]  # none yet

        sync:
          pull-every: 1m

        """)
    let config = try Config(yaml: try #require(scratch.read("folio.yaml")))
    #expect(config.table(named: "flights")?.indexes == ["dep time"])
    #expect(
      config.table(named: "todos")?.indexes.map { FieldPath($0) } == ["owner", FieldPath(["meta", "a.b"])])
    #expect(FileManager.default.fileExists(atPath: scratch.path + "/.git/folio/index/t-flights.base"))
    let explained = try scratch.folio("query", "todos", "--where", #"owner == "ann""#, "--explain")
    #expect(explained.stdout.hasPrefix("secondary index on owner"), "\(explained.stdout)")
    let rows = try scratch.folio("query", "todos", "--where", #"owner == "ann""#)
    #expect(rows.stdout.split(separator: "\n").count == 2, "\(rows.stdout)")
  }

  @Test func rmTakesTheIndexOutOfTheFileAndTheIndexFiles() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("tables", "index", "add", "todos", "owner").status == 0)
    let removed = try scratch.folio("tables", "index", "rm", "todos", "owner")
    #expect(removed.status == 0, "\(removed.stderr)")
    #expect(
      removed.stdout
        == "removed index owner from table 'todos' in folio.yaml; the table's index files no longer hold it\n"
    )
    #expect(try scratch.folio("tables", "index", "rm", "notes", "a").status == 0)
    let text = try #require(scratch.read("folio.yaml"))
    // An emptied one-line list stays, as `[]`, with whatever follows it.
    #expect(text.contains("        order: [due]\n        indexes: []\n\n    notes:"), "\(text)")
    #expect(text.contains("        indexes:\n          - b   # bee\n"), "\(text)")
    #expect(try Config(yaml: text).table(named: "todos")?.indexes == [])
    let explained = try scratch.folio("query", "todos", "--where", #"owner == "ann""#, "--explain")
    #expect(!explained.stdout.contains("secondary index"), "\(explained.stdout)")
    #expect(
      try scratch.folio("query", "todos", "--where", #"owner == "ann""#).stdout.split(separator: "\n").count
        == 2)
  }

  @Test func listPrintsOrderKeysAndIndexes() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("tables", "index", "add", "todos", "`dep time`").status == 0)
    let table = try scratch.folio("tables", "index", "list", "todos")
    #expect(table.status == 0)
    #expect(table.stdout == "PATH        KIND\ndue         order\n`dep time`  index\n")
    let json = try scratch.folio("tables", "index", "list", "todos", "--json")
    #expect(
      json.stdout == """
        {"kind":"order","path":"due","table":"todos"}
        {"kind":"index","path":"`dep time`","table":"todos"}

        """)
    let none = try scratch.folio("tables", "index", "list", "flights")
    #expect(none.status == 0)
    #expect(none.stdout.isEmpty)
    #expect(
      none.stderr
        == "table 'flights' has no order keys or indexes; add one with 'folio tables index add flights PATH'\n"
    )
  }

  @Test(arguments: [
    (
      ["add", "todos", "due"], 1,
      "folio.yaml:8:17: error: 'due' is an order key of table 'todos', which is indexed already\n"
    ),
    (["add", "notes", "b"], 1, "folio.yaml:14:13: error: 'b' of table 'notes' is indexed already\n"),
    (
      ["rm", "notes", "zz"], 1,
      "folio.yaml:10:5: error: table 'notes' has no index on 'zz'; its indexes are: a, b\n"
    ),
    (
      ["rm", "flights", "zz"], 1,
      "folio.yaml:16:5: error: table 'flights' has no index on 'zz'; it has none\n"
    ),
    (
      ["rm", "todos", "due"], 1,
      "folio.yaml:8:17: error: 'due' is an order key of table 'todos', not one of its indexes; order keys stay indexed while they are listed under 'order'\n"
    ),
    (
      ["add", "todo", "x"], 1,
      "error: UNKNOWN_TABLE: no table 'todo' in folio.yaml; did you mean 'todos'? Tables are: flights, notes, todos.\nTo add it: folio tables add todo\n"
    ),
    (
      ["list", "todo"], 1,
      "error: UNKNOWN_TABLE: no table 'todo' in folio.yaml; did you mean 'todos'? Tables are: flights, notes, todos.\nTo add it: folio tables add todo\n"
    ),
  ])
  func refusalsSayWhyAndChangeNothing(arguments: [String], status: Int32, stderr: String) throws {
    let scratch = try store()
    defer { scratch.remove() }
    let before = scratch.read("folio.yaml")
    let result = try FolioRunner.run(["tables", "index"] + arguments, in: scratch.path)
    #expect(result.status == status)
    #expect(result.stderr == stderr)
    #expect(result.stdout.isEmpty)
    #expect(scratch.read("folio.yaml") == before)
  }

  @Test(arguments: [
    (
      ["add", "todos", "`dep"], "error: invalid PATH '`dep': unterminated `quoted` segment; close it with '`'"
    ),
    (["add", "todos"], "error: missing argument"),
    ([], "error: 'index' needs an action: add, rm or list"),
    (["drop", "todos", "x"], "error: unknown index action 'drop'; use add, rm or list"),
  ])
  func usageErrorsExit64(arguments: [String], message: String) throws {
    let scratch = try store()
    defer { scratch.remove() }
    let result = try FolioRunner.run(["tables", "index"] + arguments, in: scratch.path)
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
    #expect(result.stderr.contains("See 'folio tables --help'."))
  }

  @Test func helpDescribesTheIndexActions() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let help = try scratch.folio("tables", "index", "--help")
    #expect(help.status == 0)
    #expect(help.stdout.contains("folio tables index add|rm TABLE PATH"))
    #expect(help.stdout.contains("index rm TABLE PATH"))
  }

  @Test func aTableInFlowStyleIsLeftToTheUser() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos: {path: t}\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let result = try scratch.folio("tables", "index", "add", "todos", "owner")
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "folio.yaml:3:10: error: table 'todos' is written in flow style ({…}); write its settings as a block (one per line), so that they can be changed in place\n"
    )
  }
}
