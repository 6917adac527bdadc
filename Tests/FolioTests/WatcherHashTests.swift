import Folio
import FolioCore
import FolioTestSupport
import FolioTransfer
import Foundation
import Glibc
import Testing

@testable import FolioWatch

/// Folio's own writes are recognised by content hash, without
/// parsing, and a save that only reformats a file is handled on purpose.
struct WatcherHashTests {
  @Test func ownWritesAreDroppedByHashAndReformatsAreNoOps() throws {
    let (store, scratch, watch) = try WatcherTests.watched()
    defer { scratch.remove() }
    let counters = watch.watcher.counters
    let path = try store.editorPath("todos", "a")
    // API writes: an insert, a transform, a remove.
    try store.write { _ = try $0.put(table: "todos", pk: "b", document: ["title": "from the API"]) }
    try store.apply(
      table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    try store.collection("todos").findByID("b").remove()
    #expect(watch.wait { _ in counters.snapshot.matchedByHash >= 1 })
    #expect(counters.snapshot.parsed == 0)
    // A save that only reformats: same value, other bytes. It is parsed
    // (no hash knows these bytes) and found unchanged: no op.
    try EditorSave.inPlace(path, "{\"tags\" : [ \"p\" ],\n\"views\":3,   \"title\":\"x\",\"id\":\"a\"}\n")
    #expect(watch.wait { _ in counters.snapshot.parsed == 1 })
    // The same bytes saved again are settled by hash.
    let matched = counters.snapshot.matchedByHash
    try EditorSave.tempThenRename(
      path, "{\"tags\" : [ \"p\" ],\n\"views\":3,   \"title\":\"x\",\"id\":\"a\"}\n")
    #expect(watch.wait { _ in counters.snapshot.matchedByHash == matched + 1 })
    // `folio fmt` rewrites the file in canonical form: known by hash.
    #expect(try store.format().rewritten == [try store.file("todos", "a")])
    #expect(watch.wait { _ in counters.snapshot.matchedByHash == matched + 2 })
    try store.commit(message: "by the API")
    // A reformatting save that also changes the value is not lost.
    try EditorSave.inPlace(path, "{ \"id\":\"a\",\"title\":\"x\",\"views\":4,\"tags\":[\"p\"] }")
    #expect(watch.waitForOps(1))
    // A second op, or a parse, for any save above would come before the
    // fence's.
    #expect(try watch.fence(in: store, table: "todos"))
    try watch.stop()
    #expect(watch.recordedWithoutFences.count == 1)
    #expect(
      watch.recordedWithoutFences.first?.op.mutation.transforms.map(\.transform) == [
        .increment(DecimalInteger("1")!)
      ])
    #expect(watch.problems.isEmpty)
    #expect(counters.snapshot.parsed == 3, "two saves and the fence")
    #expect(try store.status().tables.allSatisfy { $0.externalEdits.isEmpty })
  }

  @Test func aSyncCheckoutIsDroppedByHash() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let yaml = """
      version: 1
      tables:
        todos:
          path: todos
          columns:
            views: counter
      """
    let a = try fixture.seed(yaml: yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["title": "first", "views": 1])
    try a.apply(table: "todos", pk: "u", op: .insert, columns: ["title": "gone soon"])
    try a.sync()
    let b = try fixture.clone("b")
    let watch = try WatchHarness(store: b)
    let counters = watch.watcher.counters
    try a.apply(
      table: "todos", pk: "t", op: .update, columns: ["title": "from a"],
      transforms: ["views": ["op": "increment", "by": 2]])
    try a.apply(table: "todos", pk: "v", op: .insert, columns: ["title": "new"])
    try a.collection("todos").findByID("u").remove()
    try a.sync()
    try b.sync()
    #expect(try b.collection("todos").findByID("v").exec()?["title"] == "new")
    // t changed and v appeared: both checked out, both known by hash.
    #expect(watch.wait { _ in counters.snapshot.matchedByHash >= 2 })
    // An op, or a parse, for anything the checkout wrote would come before
    // the fence's.
    #expect(try watch.fence(in: b, table: "todos"))
    try watch.stop()
    #expect(watch.recordedWithoutFences.isEmpty)
    #expect(watch.problems.isEmpty)
    #expect(counters.snapshot.parsed == 1, "the fence alone")
  }
}

extension WatcherHashTests {
  /// An import without a commit logs compact ops with no body; its files
  /// are its content until the commit, so the watcher records nothing for
  /// them (as `folio commit` adds nothing for them), and a later save of
  /// another document is still recorded.
  @Test func anUncommittedImportIsNotEchoed() throws {
    let (store, scratch, watch) = try WatcherTests.watched()
    defer { scratch.remove() }
    let counters = watch.watcher.counters
    try scratch.write("in.ndjson", #"{"id":"i1","v":1}"# + "\n" + #"{"id":"i2","v":2}"# + "\n")
    var options = ImportOptions(path: scratch.path + "/in.ndjson")
    options.commit = false
    #expect(try store.importRows(into: "todos", options: options).created == 2)
    #expect(watch.wait { _ in counters.snapshot.imported >= 2 })
    try EditorSave.inPlace(
      try store.editorPath("todos", "a"), #"{"id": "a", "title": "z", "views": 1, "tags": ["p"]}"#)
    #expect(watch.waitForOps(1))
    #expect(try watch.fence(in: store, table: "todos"))
    try watch.stop()
    #expect(watch.recordedWithoutFences.map(\.op.pk) == ["a"])
    #expect(counters.snapshot.parsed == 2, "the save and the fence")
    let summary = try store.commit(message: "import")
    #expect(summary.commit != nil)
    #expect(try store.status().tables.allSatisfy { $0.externalEdits.isEmpty && $0.pendingOps == 0 })
  }
}
