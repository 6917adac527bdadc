import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Testing

struct MutableDocumentTests {
  @Test func updateRecordsOneMutationWithPaths() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try store.apply(
      table: "todos", pk: "3f2a", op: .insert,
      columns: ["views": 1, "tags": ["a"], "meta": ["color": "blue", "size": 2], "draft": true])
    let results = try todos.findByID("3f2a").update { d in
      d?["done"] = true
      d?["meta"]["color"] = "red"
      d?["views"].increment(by: 1)
      d?["tags"].arrayUnion(["offline"])
      d?["draft"].remove()
    }
    #expect(
      results == [
        .set(pk: "3f2a", path: "done", value: true),
        .set(pk: "3f2a", path: "meta.color", value: "red"),
        .removed(pk: "3f2a", path: "draft"),
        .incremented(pk: "3f2a", path: "views", by: "1"),
        .unioned(pk: "3f2a", path: "tags", values: ["offline"]),
      ])
    let doc = try #require(try todos.findByID("3f2a").exec())
    #expect(
      doc.value == [
        "id": "3f2a", "views": 2, "tags": ["a", "offline"], "meta": ["color": "red", "size": 2],
        "done": true,
      ])
    let op = try #require(try store.ops(table: "todos", pk: "3f2a").last)
    #expect(Set(op.mutation.transforms.map(\.path)) == ["views", "tags"])
    #expect(Set(op.mutation.assignments.map(\.path.description)) == ["done", "meta.color", "draft"])
  }

  @Test func readsSeeEarlierChangesAndReplayMatches() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "n", op: .insert, columns: ["a": ["x": 1], "n": 5])
    try store.collection("notes").findByID("n").update { d in
      guard let d else { return }
      d["n"].increment(by: 2)
      #expect(d["n"].intValue == 7)
      d["n"] = 1  // a later set replaces the increment
      d["n"].increment(by: 10)  // folded into the set
      d["a"].arrayUnion(["q"])  // a is not an array: becomes ["q"]
      d["a"]["k"] = "v"  // set under a transformed path: materialized
      d["b"] = ["c": 1]
      d["b"]["d"] = 2  // folded into the assignment of b
    }
    let doc = try #require(try store.collection("notes").findByID("n").exec())
    #expect(doc.value == ["id": "n", "a": ["k": "v"], "n": 11, "b": ["c": 1, "d": 2]])
    let op = try #require(try store.ops(table: "notes", pk: "n").last)
    let replayed = op.mutation.apply(to: ["id": "n", "a": ["x": 1], "n": 5], pk: "n", key: "id")
    #expect(replayed.document == doc.value)
  }

  @Test func updateOfMissingGetsNil() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    var sawNil = false
    let results = try store.collection("notes").findByID("none").update { d in sawNil = d == nil }
    #expect(sawNil)
    #expect(results.isEmpty)
  }

  @Test func upsertWriteStrategies() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let notes = store.collection("notes")
    #expect(try notes.upsert(["id": "a", "x": 1, "y": 1]) == "a")
    try notes.upsert(["id": "a", "x": 2], writeStrategy: .merge)
    #expect(try notes.findByID("a").exec()?.value == ["id": "a", "x": 2, "y": 1])
    try notes.upsert(["id": "a", "x": 3], writeStrategy: .insertIfAbsent)
    #expect(try notes.findByID("a").exec()?["x"] == 2)
    try notes.upsert(["id": "b", "x": 3], writeStrategy: .insertDefaultIfAbsent)
    #expect(try notes.findByID("b").exec()?["x"] == 3)
    #expect(try store.ops(table: "notes", pk: "b").first?.hlc.wall == 0)
    let generated = try notes.upsert(["x": 9])
    #expect(generated.count == 26)
    #expect(try notes.findByID(generated).exec()?["id"] == .string(generated))
  }
}

extension MutableDocumentTests {
  /// Replays the last logged op on `before` and expects the stored document.
  private func expectReplayMatches(_ store: Store, _ before: JSONObject, pk: String) throws {
    let doc = try #require(try store.collection("notes").findByID(pk).exec())
    let op = try #require(try store.ops(table: "notes", pk: pk).last)
    #expect(op.mutation.apply(to: before, pk: pk, key: "id").document == doc.value)
  }

  @Test func overlappingTransformsReplayAsWritten() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let before: JSONObject = ["id": "n", "a": ["b": 1]]
    try store.apply(table: "notes", pk: "n", op: .insert, columns: ["a": ["b": 1]])
    try store.collection("notes").findByID("n").update { d in
      d?["a"]["b"].increment(by: 1)
      d?["a"].arrayUnion(["x"])
      d?["a"]["b"].increment(by: 1)
    }
    #expect(try store.collection("notes").findByID("n").exec()?["a"] == ["b": 1])
    try expectReplayMatches(store, before, pk: "n")
  }

  @Test func setUnderTwoTransformedParentsKeepsTheValue() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let before: JSONObject = ["id": "n"]
    try store.apply(table: "notes", pk: "n", op: .insert)
    try store.collection("notes").findByID("n").update { d in
      d?["a"]["b"].arrayUnion(["y"])
      d?["a"].arrayUnion(["x"])
      d?["a"]["b"]["c"] = 5
    }
    #expect(try store.collection("notes").findByID("n").exec()?["a"] == ["b": ["c": 5]])
    try expectReplayMatches(store, before, pk: "n")
  }
}
