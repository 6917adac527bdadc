import Dispatch
import Folio
import FolioTestSupport
import FolioTransfer
import Foundation
import Synchronization
import Testing

@testable import FolioCore

/// Issue 15 §3: async/await forms, run on the store's own executor.
struct AsyncAPITests {
  struct Todo: Codable, Equatable, Sendable {
    var id: String
    var title: String
    var views = 0
  }

  /// Marks the store's executor so a body can tell where it runs.
  static let onExecutor = DispatchSpecificKey<Bool>()

  @Test func seed002ExampleCompilesAsWritten() async throws {
    let (kizunasync, scratch) = try makeStore()
    defer { scratch.remove() }
    let todoId = "3f2a"
    try await kizunasync.apply(table: "todos", pk: todoId, op: .insert, columns: ["title": "t"])
    // seed 002, "Usage", verbatim:
    try await kizunasync.apply(
      table: "todos",
      pk: todoId,
      op: .update,
      columns: [:],
      transforms: [
        "views": ["op": "increment", "by": 1],
        "tags": ["op": "arrayUnion", "values": ["offline"]],
      ]
    )
    try await kizunasync.apply(
      table: "todos",
      pk: todoId,
      op: .update,
      columns: ["done": true],
      transforms: ["views": ["op": "increment", "by": 1]]
    )
    let document = try await kizunasync.collection("todos").findByID(todoId).exec()
    #expect(document?["views"] == 2)
    #expect(document?["tags"] == ["offline"])
    #expect(document?["done"] == true)
  }

  @Test func everyBlockingCallHasAnAsyncFormOnTheStoreExecutor() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    store.executor.setSpecific(key: Self.onExecutor, value: true)
    let todos = store.collection("todos")
    let title = "one"
    try await store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": title])
    try await todos.upsert(Todo(id: "b", title: "two"))
    try await todos.insert(Todo(id: "c", title: "three"))
    let ranOnExecutor = Mutex<[Bool]>([])
    try await todos.findByID("a").update { d in
      ranOnExecutor.withLock { $0.append(DispatchQueue.getSpecific(key: Self.onExecutor) == true) }
      d?["views"].increment(by: 5)
    }
    let written = try await store.write { tx in
      ranOnExecutor.withLock { $0.append(DispatchQueue.getSpecific(key: Self.onExecutor) == true) }
      return try tx.apply(table: "todos", pk: "b", op: .update, transforms: ["views": .increment(1)]).count
    }
    #expect(written == 1)
    #expect(ranOnExecutor.withLock { $0 } == [true, true])
    #expect(try await todos.findByID("a").exec(as: Todo.self) == Todo(id: "a", title: "one", views: 5))
    #expect(try await todos.query().orderByKey().get(as: Todo.self).map(\.title) == ["one", "two", "three"])
    #expect(try await todos.query().count() == 3)
    #expect(
      try await todos.query().where("views > 0").update(columns: ["hot": true]).changedPKs == ["a", "b"])
    #expect(
      try await store.apply(table: "todos", where: "hot == true", op: .update, columns: ["n": 1])
        .matchedPKs.count == 2)
    #expect(try await todos.findByID("c").evict())
    #expect(try await todos.findByID("b").remove())
    #expect(try await todos.query().remove().changedPKs == ["a"])
    let commit = try await store.commit(message: "async")
    #expect(commit.commit != nil)

    var export = ExportOptions()
    export.outputPath = scratch.path + "/out.ndjson"
    try await store.apply(table: "todos", pk: "x", op: .insert, columns: ["title": "x"])
    #expect(try await store.exportRows(from: "todos", options: export).rows == 1)
    var options = ImportOptions(path: export.outputPath!)
    options.mode = .upsert
    try await store.importRows(into: "notes", options: options)
    #expect(try await store.collection("notes").query().count() == 1)
  }

  @Test func asyncSync() async throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let store = try fixture.seed(yaml: testYAML)
    try await store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "synced"])
    let summary = try await store.sync()
    #expect(summary.pushed)
    let other = try fixture.clone("r1")
    #expect(try await other.collection("todos").findByID("a").exec()?["title"] == "synced")
  }

  @Test func manyConcurrentCallsDoNotStarveThePool() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    // More concurrent blocking calls than the cooperative pool has threads:
    // each waits on the store's queue, not on a pool thread.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<64 {
        group.addTask {
          try await store.apply(table: "todos", pk: "a", op: .upsert, transforms: ["views": .increment(i)])
        }
      }
      try await group.waitForAll()
    }
    #expect(try await store.collection("todos").findByID("a").exec()?["views"] == .integer(64 * 63 / 2))
  }
}
