import Dispatch
import Folio
import Foundation

/// A todo, as the app knows it. Folio reads and writes it through its own
/// Codable encoder and decoder.
struct Todo: Codable, Sendable, Equatable {
  var id: String
  var title: String
  var done = false
  var views = 0
  var tags: [String] = []
  var lastUpdate = 0
  var due: Date? = nil
}

let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("folio-todoapp-\(getpid())")

/// Removes the scratch store and ends the program.
func finish(_ status: Int32) -> Never {
  try? FileManager.default.removeItem(at: root)
  exit(status)
}

/// Ends the program with a message when a check fails.
func check(_ condition: Bool, _ message: String, line: Int = #line) {
  if !condition {
    FileHandle.standardError.write(Data("TodoApp:\(line): check failed: \(message)\n".utf8))
    finish(1)
  }
}

// The store and its table, made in Swift.
let store = try Store.create(
  at: root, tables: ["todos": .init(path: "data/todos", order: ["lastUpdate"], columns: ["views": .counter])])
let todos = store.collection("todos")

// Codable in and out.
try todos.insert(
  Todo(id: "a", title: "Buy milk", lastUpdate: 1, due: Date(timeIntervalSince1970: 1_700_000_000)))
try todos.upsert(Todo(id: "b", title: "Walk", lastUpdate: 2))
check(try todos.findByID("a").exec(as: Todo.self)?.title == "Buy milk", "exec(as:)")

// Plain Swift values: columns, transforms, cursors, assignments, reads.
let newTitle = "Buy oat milk"
let by: Int64 = 5_000_000_000
let tags = ["home", "offline"]
try store.apply(
  table: "todos", pk: "a", op: .update, columns: ["title": newTitle],
  transforms: ["views": .increment(by), "tags": .arrayUnion(tags)])
try todos.findByID("b").update { d in
  d?["title"] = "Walk \(tags.count) dogs"
  d?["done"] = true
}
let a = try todos.findByID("a").exec()
check(a?["views", as: Int.self] == 5_000_000_000, "a counter past 32 bits reads as an Int")
let from = 2
check(try todos.query().startAt(from).get(as: Todo.self).map(\.id) == ["b"], "startAt(Int)")

// Write with filters (seed 002): one transaction, one op per document.
let outcome = try store.apply(
  table: "todos", where: "done == false", op: .update, transforms: ["views": .increment(1)])
check(outcome.changedPKs == ["a"], "apply(table:where:)")
check(try todos.query().where("done == true").remove().changedPKs == ["b"], "query.remove()")

// Live query on the default queue, the main queue (seed 000): this program
// runs it with dispatchMain() below, so the events arrive.
let mainKey = DispatchSpecificKey<Bool>()
DispatchQueue.main.setSpecific(key: mainKey, value: true)
var events: [Int] = []  // the handler runs on the main actor, so it may change this
let live = try todos.findByID("a").observeLocal(as: Todo.self) { todo, event in
  check(DispatchQueue.getSpecific(key: mainKey) == true, "delivered on the main queue")
  events.append(todo?.views ?? -1)
  if event.isInitial {
    // async/await: seed 002's call, run on the store's own queue.
    Task {
      try await store.apply(
        table: "todos", pk: "a", op: .update, columns: [:],
        transforms: [
          "views": ["op": "increment", "by": 1], "tags": ["op": "arrayUnion", "values": ["offline"]],
        ])
    }
  } else {
    check(events == [5_000_000_001, 5_000_000_002], "events \(events)")
    print("TodoApp: ok")
    finish(0)
  }
}
Task { @MainActor in
  try await Task.sleep(for: .seconds(30))
  check(false, "no event within 30 s; events so far: \(events)")
}
withExtendedLifetime(live) { dispatchMain() }
