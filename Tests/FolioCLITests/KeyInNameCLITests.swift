import Folio
import FolioTestSupport
import Foundation
import Testing

/// Tables that keep the pk in the file name only (`key: null`), end to end:
/// each document holds exactly what was written, and every surface (put,
/// get, query, export, import, fsck, edits, sync and serve) gets the pk
/// from the name.
@Suite struct KeyInNameCLITests {
  static let yaml = """
    version: 1
    tables:
      users:
        path: data/users
        key: null
        columns:
          visits: counter
    """

  func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    return scratch
  }

  @Test func tablesAddKeyInNameWritesKeyNullAndRefusesAKeyBesideIt() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let added = try scratch.folio("tables", "add", "fb", "--key-in-name")
    #expect(added.status == 0, "\(added.stderr)")
    #expect(added.stdout.contains("    key: null\n"), "\(added.stdout)")
    let listed = try scratch.folio("tables", "--json")
    #expect(listed.stdout.contains(#""key":null"#), "\(listed.stdout)")

    let both = try scratch.folio("tables", "add", "other", "--key", "id", "--key-in-name")
    #expect(both.status == 64)
    #expect(both.stderr.contains("--key-in-name"), "\(both.stderr)")
    #expect(!(scratch.read("folio.yaml") ?? "").contains("other"))
  }

  @Test func aDocumentHoldsExactlyWhatWasWrittenIdIncluded() throws {
    let scratch = try store()
    defer { scratch.remove() }
    // An `id` member is the document's own, not the key: it may differ
    // from the pk, and a later put may drop it.
    let put = try scratch.folio("put", "users", "ann", "-", input: #"{"id": 7, "name": "Ann"}"#)
    #expect(put.status == 0, "\(put.stderr)")
    #expect(scratch.read("data/users/ann.json") == "{\n  \"id\": 7,\n  \"name\": \"Ann\"\n}\n")
    #expect(try scratch.folio("put", "users", "ann", "-", input: #"{"name": "Ann"}"#).status == 0)
    #expect(scratch.read("data/users/ann.json") == "{\n  \"name\": \"Ann\"\n}\n")
    let got = try scratch.folio("get", "users", "ann")
    #expect(got.status == 0)
    #expect(try JSONValue(parsing: got.stdout) == ["name": "Ann"])

    // Without a pk, one is generated and the value is still stored as given.
    let generated = try scratch.folio("put", "users", "-", input: #"{"name": "Bob"}"#)
    #expect(generated.status == 0, "\(generated.stderr)")
    let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/data/users").sorted()
    #expect(files.count == 2)
    let bob = try #require(files.first { $0 != "ann.json" })
    #expect(scratch.read("data/users/" + bob) == "{\n  \"name\": \"Bob\"\n}\n")

    // A counter on such a table starts from a document without a key.
    let bumped = try scratch.folio(
      "apply", "users", "cy", "--op", "upsert", "--transforms", #"{"visits": {"op": "increment", "by": 3}}"#)
    #expect(bumped.status == 0, "\(bumped.stderr)")
    #expect(scratch.read("data/users/cy.json") == "{\n  \"visits\": 3\n}\n")

    let fsck = try scratch.folio("fsck")
    #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")
  }

  @Test func queryRowsCarryThePkAsUnderscoreKey() throws {
    let scratch = try store()
    defer { scratch.remove() }
    for (pk, body) in [("a", #"{"id": 2, "age": 30}"#), ("b", #"{"id": 1, "age": 20}"#)] {
      #expect(try scratch.folio("put", "users", pk, "-", input: body).status == 0)
    }
    let rows = try scratch.folio("query", "users", "--order-by-child", "id")
    #expect(rows.status == 0, "\(rows.stderr)")
    #expect(rows.stdout == "{\"_key\":\"b\",\"age\":20,\"id\":1}\n{\"_key\":\"a\",\"age\":30,\"id\":2}\n")
    let filtered = try scratch.folio("query", "users", "--where", "id == 2")
    #expect(filtered.stdout == "{\"_key\":\"a\",\"age\":30,\"id\":2}\n", "\(filtered.stderr)")
    let table = try scratch.folio("query", "users", "--format", "table")
    #expect(
      table.stdout.split(separator: "\n").first.map {
        $0.split(separator: " ", omittingEmptySubsequences: true)
      } == ["_key", "age", "id"])
    let csv = try scratch.folio("query", "users", "--format", "csv")
    #expect(csv.stdout == "_key,age,id\na,30,2\nb,20,1\n", "\(csv.stderr)")
  }

  @Test func exportImportRoundTripsAndANameClashIsAClearError() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(
      try scratch.folio("put", "users", "--", "-Nx3", "-", input: #"{"name": "Ann", "n": {"a": 1}}"#).status
        == 0)
    #expect(try scratch.folio("put", "users", "b", "-", input: #"{"name": "Bob"}"#).status == 0)
    let exported = try scratch.folio("export", "users", "-o", "out.ndjson")
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(
      scratch.read("out.ndjson")
        == "{\"_key\":\"-Nx3\",\"n\":{\"a\":1},\"name\":\"Ann\"}\n{\"_key\":\"b\",\"name\":\"Bob\"}\n")

    let imported = try scratch.folio("import", "copy", "out.ndjson", "--create", "--key-in-name")
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stderr.contains("key: null"), "\(imported.stderr)")
    let copied = scratch.read(newTableFile("data/copy", "-Nx3"))
    #expect(copied != nil && copied == scratch.read("data/users/-Nx3.json"))
    #expect(scratch.read(newTableFile("data/copy", "b")) == "{\n  \"name\": \"Bob\"\n}\n")

    // --pk names the row's pk column on both sides.
    #expect(
      try scratch.folio("export", "users", "--pk", "who", "--format", "csv", "-o", "out.csv").status == 0)
    #expect(
      scratch.read("out.csv")?.hasPrefix("who,n,name\n-Nx3,") == true, "\(scratch.read("out.csv") ?? "")")
    let sqlite = try scratch.folio("export", "users", "--pk", "who", "-o", "out.db")
    #expect(sqlite.status == 0, "\(sqlite.stderr)")
    #expect(
      try scratch.folio("import", "again", "out.db", "--create", "--key-in-name", "--pk", "who").status == 0)
    // SQLite gives the row a NULL for the column it lacks; the pk column
    // stays out of the document.
    #expect(scratch.read(newTableFile("data/again", "b")) == "{\n  \"n\": null,\n  \"name\": \"Bob\"\n}\n")

    // A document member of the row key's name: the error says what to do,
    // and no file is left behind.
    let clash = try scratch.folio("export", "users", "--pk", "name", "-o", "clash.ndjson")
    #expect(clash.status != 0)
    #expect(clash.stderr.contains("has a member 'name' of its own"), "\(clash.stderr)")
    #expect(clash.stderr.contains("--pk"), "\(clash.stderr)")
    #expect(scratch.read("clash.ndjson") == nil)

    // On a table with a key column, --pk on export is a mistake.
    #expect(try scratch.folio("tables", "add", "keyed").status == 0)
    let keyed = try scratch.folio("export", "keyed", "--pk", "who")
    #expect(keyed.status != 0)
    #expect(keyed.stderr.contains("key column 'id'"), "\(keyed.stderr)")
  }

  @Test func anEditRecordsTheChangeAndSyncMergesWithoutAddingAKey() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("r0/folio.yaml", Self.yaml)
    try box.folio(["init"], in: "r0")
    try box.folio(["put", "users", "u", "-"], in: "r0", input: #"{"name": "Ann", "visits": 1}"#)
    try box.folio(["commit", "-m", "seed"], in: "r0")
    #expect(try box.git("remote add origin \(box.remote)", in: "r0") == 0)
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r1", in: box.root.path) == 0)
    try box.folio(["init"], in: "r1")

    // r0 edits the file as an editor would; r1 bumps the counter.
    try box.root.write("r0/data/users/u.json", "{\n  \"name\": \"Ann B\",\n  \"visits\": 1\n}\n")
    try box.folio(["commit", "-m", "rename"], in: "r0")
    try box.folio(["sync"], in: "r0")
    try box.folio(
      [
        "apply", "users", "u", "--op", "update", "--transforms", #"{"visits": {"op": "increment", "by": 4}}"#,
      ],
      in: "r1")
    try box.folio(["sync"], in: "r1")
    try box.folio(["sync"], in: "r0")
    for replica in ["r0", "r1"] {
      #expect(
        box.file(replica + "/data/users/u.json") == "{\n  \"name\": \"Ann B\",\n  \"visits\": 5\n}\n",
        "\(replica)")
    }
  }

  @Test func serveReturnsExactlyWhatAFirebaseClientWrote() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let server = try ServeCLITests.Server(in: scratch.path)
    defer { _ = server.stop() }
    let written = #"{"id":"not-the-key","n":{"a":1}}"#
    let put = try ServeCLITests.curl("PUT", server.base + "/users/u1.json", body: written)
    #expect(put.status == 200, "\(put.body)")
    #expect(put.json == (try JSONValue(parsing: written)))
    let read = try ServeCLITests.curl("GET", server.base + "/users/u1.json")
    #expect(read.json == (try JSONValue(parsing: written)), "\(read.body)")
    let table = try ServeCLITests.curl("GET", server.base + "/users.json")
    #expect(table.json == ["u1": (try JSONValue(parsing: written))], "\(table.body)")

    // Removing the `id` member is an ordinary write here.
    let patch = try ServeCLITests.curl("PATCH", server.base + "/users/u1.json", body: #"{"id": null}"#)
    #expect(patch.status == 200, "\(patch.body)")
    #expect(try ServeCLITests.curl("GET", server.base + "/users/u1.json").json == ["n": ["a": 1]])
    let info = try ServeCLITests.curl("GET", server.base + "/.info/tables.json")
    #expect(info.json?["users"]?["key"] == .null, "\(info.body)")
  }
}
