import Folio
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore

/// Issue 15 §5: seed 002 "Write with filters".
struct FilteredWriteTests {
  static func seeded() throws -> (Store, Scratch) {
    let (store, scratch) = try makeStore()
    try store.write { tx in
      for (pk, done) in [("a", false), ("b", true), ("c", false), ("d", true)] {
        try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["done": .bool(done), "views": 1])
      }
    }
    return (store, scratch)
  }

  static func opCount(_ store: Store) throws -> Int {
    try OpLog.entries(in: store.opLogPath, displayName: "log").count
  }

  @Test func oneTransactionOneOpPerDocument() throws {
    let (store, scratch) = try Self.seeded()
    defer { scratch.remove() }
    let ops = try Self.opCount(store)
    let outcome = try store.apply(
      table: "todos", where: "done == false", op: .update, columns: ["owner": "ana"],
      transforms: ["views": .increment(2), "tags": .arrayUnion(["x"])])
    #expect(outcome.matchedPKs == ["a", "c"])
    #expect(outcome.changedPKs == ["a", "c"])
    #expect(
      outcome.results["a"] == [
        .set(pk: "a", path: "owner", value: "ana"), .unioned(pk: "a", path: "tags", values: ["x"]),
        .incremented(pk: "a", path: "views", by: "2"),
      ])
    let entries = try OpLog.entries(in: store.opLogPath, displayName: "log").suffix(from: ops)
    #expect(entries.map(\.op.pk) == ["a", "c"])
    #expect(entries.allSatisfy { $0.op.mutation.kind == .update && $0.op.mutation.transforms.count == 2 })
    let todos = store.collection("todos")
    #expect(try todos.findByID("a").exec()?["views"] == 3)
    #expect(try todos.findByID("b").exec()?["views"] == 1)
    #expect(try todos.findByID("c").exec()?["owner"] == "ana")
  }

  @Test func queryUpdateAndRemove() throws {
    let (store, scratch) = try Self.seeded()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    let owner = "bo"
    let updated = try todos.query().orderByKey().limitToFirst(2).update(columns: ["owner": owner])
    #expect(updated.changedPKs == ["a", "b"])
    // Assigning what a document holds is still an assignment (it wins a
    // later merge against an older one), as for one document.
    let again = try todos.query().where("owner == \"bo\"").update(columns: ["owner": owner])
    #expect(again.changedPKs == ["a", "b"])
    // An update with nothing in it changes nothing.
    #expect(try todos.query().update(columns: [:]).changedPKs == [])
    let removed = try todos.query().where("done == true").remove()
    #expect(removed.changedPKs == ["b", "d"])
    #expect(removed.allResults == [.removed(pk: "b", path: ""), .removed(pk: "d", path: "")])
    #expect(try todos.allPKs().sorted() == ["a", "c"])
  }

  @Test(arguments: [
    ["views": ["op": "increment", "by": 1.5]] as [String: JSONValue],
    ["views": ["op": "increment"]],
    ["tags": ["op": "arrayUnion", "values": "x"]],
    ["views": 3],
    ["views": ["op": "multiply", "by": 2]],
  ])
  func malformedTransformsTouchNothing(_ transforms: [String: JSONValue]) throws {
    let (store, scratch) = try Self.seeded()
    defer { scratch.remove() }
    let before = try Self.opCount(store)
    let files = ["a", "b", "c", "d"].map { scratch.read("data/todos/\($0).json") }
    let error = #expect(throws: FolioError.self) {
      try store.apply(
        table: "todos", where: "done == false", op: .update, columns: ["owner": "x"], transforms: transforms)
    }
    #expect(error?.code == .localConstraint)
    #expect(error?.table == "todos")
    #expect(try Self.opCount(store) == before)
    #expect(["a", "b", "c", "d"].map { scratch.read("data/todos/\($0).json") } == files)
  }

  @Test func dryRunAndNoMatchWriteNothing() throws {
    let (store, scratch) = try Self.seeded()
    defer { scratch.remove() }
    let before = try Self.opCount(store)
    let dry = try store.apply(table: "todos", where: "done == true", op: .remove, dryRun: true)
    #expect(dry.changedPKs == ["b", "d"])
    #expect(try store.collection("todos").count() == 4)
    let none = try store.apply(table: "todos", where: "views > 100", op: .update, columns: ["x": 1])
    #expect(none.matchedPKs.isEmpty)
    #expect(try Self.opCount(store) == before)
    let insert = #expect(throws: FolioError.self) {
      try store.apply(table: "todos", where: "done == true", op: .insert, columns: ["x": 1])
    }
    #expect(insert?.code == .localConstraint)
  }

  @Test func aKeyColumnChangeFailsTheWholeTransaction() throws {
    let (store, scratch) = try Self.seeded()
    defer { scratch.remove() }
    let before = try Self.opCount(store)
    #expect(throws: FolioError.self) {
      try store.apply(table: "todos", where: "done == false", op: .update, columns: ["id": "z"])
    }
    #expect(try Self.opCount(store) == before)
  }
}
