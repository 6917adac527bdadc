import Folio
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

/// Live queries see documents that a sync brings in: a fast-forward and a
/// merge both check out files without this replica's transactions.
struct LiveQuerySyncTests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: todos
        columns:
          views: counter
    """

  @Test func seesFastForwardsAndMergesFromSync() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 1])
    try a.sync()
    let b = try fixture.clone("b")
    let recorder = EventRecorder<JSONValue?>()
    let live = try b.collection("todos").findByID("t").observeLocal { document, _ in
      recorder.append(document?["views"])
    }
    defer { live.stop() }
    let query = EventRecorder<[String]>()
    let liveQuery = try b.collection("todos").query().observeLocal { documents, _ in
      query.append(documents.map(\.pk))
    }
    defer { liveQuery.stop() }
    #expect(recorder.wait(for: 1) == [1])
    // A fast-forward: a's commit lands in b's working tree.
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    try a.apply(table: "todos", pk: "u", op: .insert, columns: ["views": 0])
    try a.sync()
    try b.sync()
    #expect(recorder.wait { $0.last == 3 }.last == 3)
    #expect(query.wait { $0.last == ["t", "u"] }.last == ["t", "u"])
    // A merge: both sides changed the counter.
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 10]])
    try a.sync()
    try b.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 100]])
    try b.sync()
    #expect(recorder.wait { $0.last == 113 }.last == 113)
    #expect(recorder.all.contains(103))  // b's own transaction came first
  }
}
