import Folio
import FolioCore
import FolioSystem
import FolioTestSupport
import FolioTransfer
import Foundation
import Testing

/// Where a table's schema is enforced in the library: every write path
/// refuses a violation before anything is written, an import refuses the
/// row with its position, the watcher reports a bad save and records it
/// once fixed, and `check` and `status` report documents that break it
/// (merged, edited outside Folio or committed by hand).
@Suite struct SchemaStoreTests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
        schema: schemas/todos.schema.json
        columns:
          views: counter
          tags: set
    """
  static let schema = """
    {
      "type": "object",
      "properties": {
        "id": {"type": "string"},
        "title": {"type": "string", "minLength": 1},
        "views": {"type": ["integer", "string"], "pattern": "^-?[0-9]+$"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "done": {"type": "boolean"}
      },
      "required": ["title"],
      "additionalProperties": false
    }
    """

  func makeSchemaStore() throws -> (Store, Scratch) {
    let scratch = Scratch()
    try scratch.write("schemas/todos.schema.json", Self.schema)
    try scratch.write("folio.yaml", Self.yaml)
    return (try Store.create(at: scratch.url), scratch)
  }

  /// The op log's size: unchanged means nothing was recorded.
  func logSize(_ store: Store) -> Int { (try? FileSystem.read(store.opLogPath))??.count ?? 0 }

  @Test func everyWritePathRefusesBeforeWriting() throws {
    let (store, scratch) = try makeSchemaStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "first", "views": 1])
    let before = logSize(store)
    let bytes = scratch.read(try store.file("todos", "a"))

    func expectRefused(_ message: String, _ body: () throws -> Void) {
      #expect {
        try body()
      } throws: { error in
        guard let error = error as? FolioError, error.code == .schemaViolation else { return false }
        return error.description.hasPrefix("data/todos/") && error.message.contains(message)
      }
    }
    expectRefused("views: expected integer or string, got boolean") {
      try store.apply(table: "todos", pk: "a", op: .update, columns: ["views": true])
    }
    expectRefused("titel: no such property; did you mean 'title'?") {
      try store.write { _ = try $0.put(table: "todos", pk: "a", document: ["title": "x", "titel": "y"]) }
    }
    expectRefused("title: required, but missing") {
      try store.apply(table: "todos", pk: "b", op: .insert, columns: ["views": 1])
    }
    expectRefused("tags[0]: expected string, got integer") {
      try todos.findByID("a").update { d in d?["tags"].arrayUnion([1]) }
    }
    expectRefused("title: expected at least 1 character") {
      try todos.upsert(["id": "c", "title": ""])
    }
    // A transform that would leave a bad value is refused too: the
    // document after the transform is what is checked.
    expectRefused("views: expected a string matching") {
      try store.apply(table: "todos", pk: "a", op: .update, columns: ["views": "x"])
    }
    #expect(logSize(store) == before, "nothing was recorded")
    #expect(scratch.read(try store.file("todos", "a")) == bytes, "nothing was written")
    let (b, c) = (try store.file("todos", "b"), try store.file("todos", "c"))
    #expect(!scratch.exists(b) && !scratch.exists(c))

    // What counts is the document as the transaction leaves it.
    try store.write { tx in
      try tx.apply(table: "todos", pk: "d", op: .insert, columns: ["views": 0])
      try tx.apply(table: "todos", pk: "d", op: .update, columns: ["title": "now valid"])
    }
    // A counter past 32 bits becomes a decimal string, which this schema allows.
    try store.apply(
      table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 3_000_000_000]])
    #expect(try todos.findByID("a").exec()?.value["views"] == "3000000001")
  }

  @Test func importRefusesABadRowWithItsLine() throws {
    let (store, scratch) = try makeSchemaStore()
    defer { scratch.remove() }
    try scratch.write(
      "rows.ndjson",
      "{\"id\": \"r1\", \"title\": \"ok\"}\n{\"id\": \"r2\", \"title\": 5}\n{\"id\": \"r3\", \"title\": \"ok\"}\n"
    )
    var options = ImportOptions(path: scratch.path + "/rows.ndjson")
    options.displayName = "rows.ndjson"
    #expect {
      try store.importRows(into: "todos", options: options)
    } throws: { error in
      (error as? FolioError)?.description
        == "rows.ndjson:2:1: error: title: expected string, got integer (schema todos.schema.json#/properties/title)"
    }
    #expect(!scratch.exists(try store.file("todos", "r1")), "a refused import leaves the table as it was")
    options.continueOnError = true
    var bad: [String] = []
    let summary = try store.importRows(into: "todos", options: options) { bad.append($0.description) }
    #expect(summary.skipped == 1 && summary.created == 2)
    #expect(bad.count == 1 && bad[0].hasPrefix("rows.ndjson:2:1: error: title:"))
  }

  @Test func checkAndStatusReportDocumentsThatBreakTheSchema() throws {
    let (store, scratch) = try makeSchemaStore()
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "fine"])
    try store.commit()
    // Committed outside Folio's checks: a hand edit, then `git commit`.
    let b = try store.file("todos", "b")
    try scratch.write(b, "{\n  \"id\": \"b\",\n  \"title\": 7\n}\n")
    try git(["add", "-A"], in: scratch.path)
    try git(["commit", "-qm", "by hand"], in: scratch.path)
    let expected =
      b + ":3:12: error: title: expected string, got integer (schema todos.schema.json#/properties/title)"
    #expect(try store.check().map(\.description) == [expected])
    #expect(try store.status().schemaViolations.map(\.description) == [expected])
    // The second status reads the remembered answer for the same tree.
    #expect(try store.status().schemaViolations.map(\.description) == [expected])
    #expect(scratch.exists(".git/folio/schema-status.json"))
    // An edit on disk wins over the commit; a new commit is diffed in.
    try scratch.write(b, "{\"id\": \"b\", \"title\": \"fixed\", \"extra\": 1}\n")
    #expect(
      try store.status().schemaViolations.map(\.description) == [
        b + ":1:31: error: extra: no such property (schema todos.schema.json#/additionalProperties)"
      ])
    try scratch.write(b, "{\"id\": \"b\", \"title\": \"fixed\"}\n")
    try store.commit()
    #expect(try store.status().schemaViolations.isEmpty)
    #expect(try store.check().isEmpty)
  }

  @Test func theWatcherReportsABadSaveAndRecordsItOnceFixed() throws {
    let (store, scratch) = try makeSchemaStore()
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "start", "views": 1])
    let watch = try WatchHarness(store: store)
    defer { try? watch.stop() }
    let a = try store.file("todos", "a")
    try scratch.write(a, "{\n  \"id\": \"a\",\n  \"title\": \"start\",\n  \"views\": \"ten\"\n}\n")
    #expect(watch.waitForProblems(1))
    #expect(
      watch.problems.first?.description
        == a + ":4:12: error: views: expected a string matching ^-?[0-9]+$, got \"ten\" "
        + "(schema todos.schema.json#/properties/views)"
    )
    #expect(watch.recorded.isEmpty, "a save that breaks the schema is not recorded")
    try scratch.write(a, "{\n  \"id\": \"a\",\n  \"title\": \"start\",\n  \"views\": 10\n}\n")
    #expect(watch.waitForOps(1))
    #expect(watch.recorded.first?.op.mutation.transforms.first?.path == "views", "recorded as an increment")
  }

  /// A save past the store's size limit is reported, and not recorded,
  /// until a later save is back within it.
  @Test func theWatcherReportsASavePastTheSizeLimit() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write(
      "folio.yaml", "version: 1\ntables:\n  todos:\n    path: data/todos\nlimits:\n  document: 4K\n")
    let store = try Store.create(at: scratch.url)
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "start"])
    let watch = try WatchHarness(store: store)
    defer { try? watch.stop() }
    let big = String(repeating: "x", count: 5_000)
    try scratch.write(try store.file("todos", "a"), "{\n  \"id\": \"a\",\n  \"title\": \"\(big)\"\n}\n")
    #expect(watch.waitForProblems(1))
    #expect(watch.problems.first?.code == .tooLarge)
    #expect(
      watch.problems.first?.description.hasPrefix(
        try store.file("todos", "a") + ":1:1: error: 5031 bytes, more than the store's limit of 4096")
        == true, "\(watch.problems.first?.description ?? "")")
    #expect(watch.recorded.isEmpty, "a save past the limit is not recorded")
    try scratch.write(try store.file("todos", "a"), "{\n  \"id\": \"a\",\n  \"title\": \"small\"\n}\n")
    #expect(watch.waitForOps(1))
  }
}
