import Folio  // not @testable: the README uses only the public API
import FolioTestSupport
import Foundation
import Testing

/// The README's library example: its declarations, as written, inside a
/// type. `scripts/test.sh` also builds the README's block unchanged as a
/// program's `main.swift` (top-level code) and runs it.
struct ReadmeExampleTests {
  // README: begin (after `import Folio` and `import Foundation`)
  struct Todo: Codable, Sendable {
    var id: String
    var title: String
    var done = false
    var views = 0
    var tags: [String] = []
    var lastUpdate = 0
  }

  // In async code every call awaits: it runs on the store's own queue.
  static func tour(_ store: Store) async throws {
    let todos = store.collection("todos")
    try await todos.upsert(Todo(id: "3f2a", title: "Buy milk", lastUpdate: 100))
    let title = "Buy oat milk"
    try await todos.findByID("3f2a").update { d in  // one mutation: assignments and transforms
      d?["title"] = title
      d?["views"].increment(by: 1)
    }
    try await store.apply(
      table: "todos", pk: "3f2a", op: .update,
      columns: ["done": true], transforms: ["tags": .arrayUnion(["home"])])
    let todo = try await todos.findByID("3f2a").exec(as: Todo.self)  // Todo?
    let page = try await todos.query()  // ordered, cursor-paged, filtered
      .orderBy(child: "lastUpdate").startAfter(0).limitToFirst(20).get(as: Todo.self)
    print(todo?.title ?? "none", page.count)
    try await store.apply(  // write with filters: one op per matching document
      table: "todos", where: "done == true", op: .update, transforms: ["views": .increment(1)])
    for try await (todo, event) in try todos.findByID("3f2a").changes(as: Todo.self) {
      print(event.isInitial ? "now" : "changed", todo?.title ?? "deleted")
      break
    }
    try await store.write { tx in  // several mutations, one durability point
      try tx.apply(table: "todos", pk: "b", op: .upsert, columns: ["title": "Walk", "lastUpdate": 200])
      try tx.remove(table: "todos", pk: "b")
    }
  }

  // Outside async code, the same calls block and take no await.
  static func markDone(_ store: Store, pk: String) throws {
    try store.collection("todos").findByID(pk).update { d in d?["done"] = true }
  }
  // README: end

  @Test func readmeLibraryExampleRunsAsWritten() async throws {
    let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
      "readme-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let store = try Store.create(
      at: root, tables: ["todos": .init(path: "data/todos", order: ["lastUpdate"])])
    try await Self.tour(store)
    let reopened = try Store(at: root)
    let todos = reopened.collection("todos")
    #expect(try await todos.query().count() == 1)  // b came and went
    let todo = try await todos.findByID("3f2a").exec(as: Todo.self)
    #expect(todo?.title == "Buy oat milk")
    #expect(todo?.views == 2)  // the update, then the filtered write
    #expect(todo?.done == true)
    #expect(todo?.tags == ["home"])
    try await reopened.apply(table: "todos", pk: "3f2a", op: .update, columns: ["done": false])
    try Self.markDone(reopened, pk: "3f2a")
    #expect(try await todos.findByID("3f2a").exec(as: Todo.self)?.done == true)
  }
}
