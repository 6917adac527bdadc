import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import FolioTransfer
import Foundation
import Testing

/// Issue 13: pks and JSON keys are bytes. Twins that Swift's `String ==`
/// calls equal (composed "é" and decomposed "e" + U+0301), and a pair that
/// differs only in a zero-width joiner, stay two documents and two keys in
/// every subsystem: put/get, query, live queries and their child events,
/// observe, import, export, watch, commit and sync merge (git pull with the
/// driver is in the CLI tests).
struct TwinKeyTests {
  static let composed = "caf\u{E9}"
  static let decomposed = "cafe\u{301}"
  static let joined = "a\u{200D}b"
  static let plain = "ab"
  static let twins = [composed, decomposed, joined, plain]

  /// The pks of `documents`, as byte arrays (what `==` on them compares).
  static func bytes(_ pks: [String]) -> [[UInt8]] { pks.map { Array($0.utf8) } }

  static func n(_ document: Document?) -> Int? { document?["n"]?.intValue }

  func put(_ store: Store, _ pk: String, n: Int) throws {
    try store.apply(table: "todos", pk: pk, op: .upsert, columns: ["n": .integer(n)])
  }

  @Test func twinsAreTwoDocumentsForPutGetAndQuery() throws {
    #expect(Self.composed == Self.decomposed, "the premise: Swift calls them equal")
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    for (i, pk) in Self.twins.enumerated() { try put(store, pk, n: i) }
    let todos = store.collection("todos")
    for (i, pk) in Self.twins.enumerated() {
      let document = try #require(try todos.findByID(pk).exec())
      #expect(Array(document.pk.utf8) == Array(pk.utf8))
      #expect(Self.n(document) == i)
    }
    let all = try todos.query().orderByKey().get()
    #expect(Set(Self.bytes(all.map(\.pk))) == Set(Self.bytes(Self.twins)))
    // One-shot equality cursors find each twin alone.
    for pk in Self.twins {
      let found = try todos.query().orderByKey().equalTo(.string(pk)).get()
      #expect(Self.bytes(found.map(\.pk)) == Self.bytes([pk]))
    }
    // Removing one leaves the other.
    try todos.findByID(Self.decomposed).remove()
    #expect(Self.n(try todos.findByID(Self.composed).exec()) == 0)
    #expect(try todos.findByID(Self.decomposed).exec() == nil)
  }

  @Test func evictingOneTwinLeavesTheOther() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    for (i, pk) in Self.twins.enumerated() { try put(store, pk, n: i) }
    _ = try store.commit(message: "twins")
    let todos = store.collection("todos")
    #expect(try todos.findByID(Self.composed).evict())
    #expect(try store.isEvicted(table: "todos", pk: Self.composed))
    #expect(try !store.isEvicted(table: "todos", pk: Self.decomposed))
    #expect(try todos.findByID(Self.composed).exec() == nil)
    #expect(Self.n(try todos.findByID(Self.decomposed).exec()) == 1)
    // The commit sees one eviction, not a deletion, and leaves the twin alone.
    let status = try store.status()
    let table = try #require(status.tables.first { $0.name == "todos" })
    #expect(Self.bytes(table.evicted) == Self.bytes([Self.composed]), "\(table.evicted)")
    // Writing the evicted twin again clears only its mark.
    try put(store, Self.composed, n: 9)
    #expect(try !store.isEvicted(table: "todos", pk: Self.composed))
    #expect(Self.n(try todos.findByID(Self.decomposed).exec()) == 1)
  }

  @Test func liveQueriesChildEventsAndObserveKeepTwinsApart() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    for pk in [Self.composed, Self.decomposed, "z"] { try put(store, pk, n: 0) }
    let todos = store.collection("todos")
    // By key (UTF-16): "cafe\u{301}" < "caf\u{E9}"? 'e' (0x65) < 'é' (0xE9),
    // so the decomposed twin is first, then the composed one, then z.
    let window = try todos.query().orderByKey().limitToLast(2)
    let windows = EventRecorder<[[UInt8]]>()
    let live = try window.observeLocal { documents, _ in windows.append(Self.bytes(documents.map(\.pk))) }
    defer { live.stop() }
    let changed = EventRecorder<[UInt8]>()
    let liveChanged = try todos.query().orderByKey().observeLocal(.childChanged) { document, _ in
      changed.append(Array(document.pk.utf8))
    }
    defer { liveChanged.stop() }
    let single = EventRecorder<Int?>()
    let observed = try todos.findByID(Self.composed).observeLocal { document, _ in
      single.append(Self.n(document))
    }
    defer { observed.stop() }
    #expect(windows.wait(for: 1) == [Self.bytes([Self.composed, "z"])])
    #expect(single.wait(for: 1) == [0])
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }

    // Only the decomposed twin changes: outside the window, and not the
    // observed document.
    try put(store, Self.decomposed, n: 1)
    #expect(changed.wait(for: 1) == [Array(Self.decomposed.utf8)])
    // An event for the window or the observed document would come before
    // the fence's.
    #expect(try fence.pass())
    #expect(windows.all.count == 1, "\(windows.all)")
    #expect(single.all == [0])

    // Now the composed one.
    try put(store, Self.composed, n: 2)
    #expect(changed.wait(for: 2).last == Array(Self.composed.utf8))
    #expect(windows.wait(for: 2).last == Self.bytes([Self.composed, "z"]))
    #expect(single.wait(for: 2) == [0, 2])

    // Another process's write reaches the watcher path: the same rules.
    let other = try Store(at: scratch.url)
    try other.apply(table: "todos", pk: Self.decomposed, op: .update, columns: ["n": 3])
    #expect(changed.wait(for: 3).last == Array(Self.decomposed.utf8))
    #expect(try fence.pass())
    #expect(windows.all.count == 2, "\(windows.all)")
    #expect(single.all == [0, 2])
  }

  @Test func twinJSONKeysAreTwoColumnsThroughPutGetImportAndExport() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let columns: JSONObject = JSONObject([
      (Self.composed, JSONValue.integer(1)), (Self.decomposed, .integer(2)), (Self.joined, .integer(3)),
      (Self.plain, .integer(4)),
    ])
    #expect(columns.count == 4)
    try store.apply(table: "todos", pk: "k", op: .insert, columns: columns)
    let document = try #require(try store.collection("todos").findByID("k").exec())
    for (i, key) in Self.twins.enumerated() { #expect(document[key]?.intValue == i + 1) }

    // Import: twin pks are two rows, not duplicates; twin keys two columns.
    var lines = ""
    for (i, pk) in Self.twins.enumerated() {
      lines += #"{"id":"\#(pk)","\#(Self.composed)":\#(i),"\#(Self.decomposed)":\#(i + 10)}"# + "\n"
    }
    try scratch.write("rows.ndjson", lines)
    var options = ImportOptions(path: scratch.path + "/rows.ndjson")
    options.mode = .insert
    let summary = try store.importRows(into: "notes", options: options)
    #expect(summary.created == 4)
    for (i, pk) in Self.twins.enumerated() {
      let row = try #require(try store.collection("notes").findByID(pk).exec())
      #expect(row[Self.composed]?.intValue == i)
      #expect(row[Self.decomposed]?.intValue == i + 10)
    }

    // Export: every twin row, and (CSV) a column per twin key.
    var export = ExportOptions()
    export.outputPath = scratch.path + "/out.ndjson"
    try store.exportRows(from: "notes", options: export)
    let exported = try #require(scratch.read("out.ndjson")).split(separator: "\n").map {
      try JSONValue(parsing: Array($0.utf8))
    }
    #expect(Set(Self.bytes(exported.compactMap { $0["id"]?.stringValue })) == Set(Self.bytes(Self.twins)))
    export.format = .csv
    export.outputPath = scratch.path + "/out.csv"
    try store.exportRows(from: "notes", options: export)
    let header = try #require(scratch.read("out.csv")?.components(separatedBy: "\n").first)
    let names = header.split(separator: ",").map { Array($0.utf8) }
    #expect(names.count == 3, "\(header)")
    #expect(Set(names) == Set([Array("id".utf8), Array(Self.composed.utf8), Array(Self.decomposed.utf8)]))
  }

  @Test func commitAndSyncMergeKeepTwinsApart() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: testYAML)
    for pk in Self.twins { try put(a, pk, n: 0) }
    try a.apply(table: "todos", pk: "k", op: .insert, columns: ["views": 0])
    _ = try a.commit()
    try a.sync()
    let b = try fixture.clone("b")
    // Concurrent edits of each twin on a different replica, and twin keys
    // set in one document on both sides.
    try a.apply(
      table: "todos", pk: Self.composed, op: .update, columns: ["n": 10],
      transforms: ["views": ["op": "increment", "by": 1]])
    try b.apply(
      table: "todos", pk: Self.decomposed, op: .update, columns: ["n": 20],
      transforms: ["views": ["op": "increment", "by": 2]])
    try a.apply(table: "todos", pk: Self.joined, op: .update, columns: ["n": 30])
    try b.apply(table: "todos", pk: Self.plain, op: .update, columns: ["n": 40])
    try a.apply(
      table: "todos", pk: "k", op: .update, columns: JSONObject([(Self.composed, JSONValue.integer(1))]))
    try b.apply(
      table: "todos", pk: "k", op: .update, columns: JSONObject([(Self.decomposed, JSONValue.integer(2))]))
    try a.sync()
    try b.sync()
    try a.sync()
    for store in [a, b] {
      let todos = store.collection("todos")
      #expect(Self.n(try todos.findByID(Self.composed).exec()) == 10)
      #expect(Self.n(try todos.findByID(Self.decomposed).exec()) == 20)
      #expect(Self.n(try todos.findByID(Self.joined).exec()) == 30)
      #expect(Self.n(try todos.findByID(Self.plain).exec()) == 40)
      #expect(try todos.findByID(Self.composed).exec()?["views"]?.intValue == 1)
      #expect(try todos.findByID(Self.decomposed).exec()?["views"]?.intValue == 2)
      let k = try #require(try todos.findByID("k").exec())
      #expect(k[Self.composed]?.intValue == 1)
      #expect(k[Self.decomposed]?.intValue == 2)
    }
    #expect(try tableFiles(a) == tableFiles(b))
  }

  @Test func watchRecordsEachTwinAsItsOwnDocument() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    for pk in Self.twins { try put(store, pk, n: 0) }
    _ = try store.commit()
    let harness = try WatchHarness(store: store)
    defer { try? harness.stop() }
    let table = try store.table(named: "todos")
    // Hand edits of the decomposed and the joined twin only.
    for pk in [Self.decomposed, Self.joined] {
      let path = try store.documentPath(table: table, pk: pk)
      let body = JSONValue.object(JSONObject([("id", JSONValue.string(pk)), ("n", .integer(7))]))
      try FileSystem.writeAtomically(path, body.canonicalBytes(), sync: false)
    }
    #expect(harness.waitForOps(2))
    let recorded = harness.recorded.map { Array($0.op.pk.utf8) }
    #expect(Set(recorded) == Set(Self.bytes([Self.decomposed, Self.joined])))
    let todos = store.collection("todos")
    #expect(Self.n(try todos.findByID(Self.composed).exec()) == 0)
    #expect(Self.n(try todos.findByID(Self.plain).exec()) == 0)
    #expect(Self.n(try todos.findByID(Self.decomposed).exec()) == 7)
  }
}
