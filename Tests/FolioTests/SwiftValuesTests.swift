import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

/// Issue 15 §2: plain Swift values go in everywhere a value goes in.
struct SwiftValuesTests {
  struct Point: Codable, Equatable, JSONRepresentable {
    var x: Int
    var y: Int
  }

  @Test func columnsTransformsAndCursorsTakeSwiftValues() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let title = "Buy milk"
    let n: Int64 = 3
    let small: UInt8 = 2
    let tags = ["home", "offline"]
    let height = 1.75
    let maybe: String? = nil
    let count = 2
    try store.apply(
      table: "todos", pk: "a", op: .upsert,
      columns: [
        "title": title, "height": height, "where": Point(x: 1, y: 2), "note": maybe,
        "label": "item \(count)", "scores": [1, 2, 3], "meta": ["color": "red"], "lastUpdate": 5,
      ],
      transforms: ["views": .increment(n), "tags": .arrayUnion(tags), "small": .increment(small)])
    let a = try #require(try store.collection("todos").findByID("a").exec())
    #expect(a["title"] == "Buy milk")
    #expect(a["height"] == .number("1.75"))
    #expect(a["where"] == ["x": 1, "y": 2])
    #expect(a["note"] == .null)
    #expect(a["label"] == "item 2")
    #expect(a["scores"] == [1, 2, 3])
    #expect(a["meta"] == ["color": "red"])
    #expect(a["views"] == 3)
    #expect(a["small"] == 2)
    #expect(a["tags"] == ["home", "offline"])
    #expect(a["where", as: Point.self] == Point(x: 1, y: 2))

    try store.write { tx in
      _ = try tx.apply(table: "todos", pk: "b", op: .upsert, columns: ["height": 3.5, "lastUpdate": 9])
    }
    let limit = 2.0
    let tall = try store.collection("todos").query().orderBy(child: "height").startAt(limit).get()
    #expect(tall.map(\.pk) == ["b"])
    let last = Int(9)
    #expect(try store.collection("todos").query().equalTo(last).get().map(\.pk) == ["b"])
    let pk = "a"
    #expect(try store.collection("todos").query().orderByKey().endAt(pk).get().map(\.pk) == ["a"])
  }

  @Test func updateAssignsAndReadsSwiftValues() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try todos.upsert(["id": "a", "views": 1, "meta": ["color": "blue"]])
    let title = "Walk"
    let color = "green"
    let tags: Set<String> = ["x"]
    let amount: Int64 = 5_000_000_000
    var seen: (String?, Int?, String?) = (nil, nil, nil)
    try todos.findByID("a").update { d in
      d?["title"] = title
      d?["meta"]["color"] = color
      d?["done"] = true  // literals still work
      d?["draft"] = nil
      d?["tags"].arrayUnion(tags.sorted())
      d?["views"].increment(by: amount)
      d?["point"].set(Point(x: 3, y: 4))
      let read: String? = d?["title"]
      seen = (read, d?["views", as: Int.self], d?["meta"].as(String.self))
    }
    #expect(seen.0 == "Walk")
    #expect(seen.1 == 5_000_000_001)
    #expect(seen.2 == nil)  // an object is not a String
    let a = try #require(try todos.findByID("a").exec())
    #expect(a["title"] == "Walk")
    #expect(a["meta"] == ["color": "green"])
    #expect(a["done"] == true)
    #expect(a["draft"] == .null)
    #expect(a["tags"] == ["x"])
    // seed 002: past the 32-bit range the counter is a decimal string.
    #expect(a["views"] == .string("5000000001"))
    #expect(a["point"] == ["x": 3, "y": 4])
  }

  @Test func aValueWithNoJSONFormFailsTheUpdateAndWritesNothing() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try todos.upsert(["id": "a", "views": 1])
    let before = scratch.read(try store.file("todos", "a"))
    #expect(throws: FolioError.self) {
      try todos.findByID("a").update { d in
        d?["views"] = 2
        d?["ratio"] = Double.nan
      }
    }
    #expect(scratch.read(try store.file("todos", "a")) == before)
    // As a transform value: LOCAL_CONSTRAINT before anything is written.
    let error = #expect(throws: FolioError.self) {
      try store.apply(table: "todos", pk: "a", op: .update, transforms: ["t": .arrayUnion([Double.nan])])
    }
    #expect(error?.code == .localConstraint)
    #expect(scratch.read(try store.file("todos", "a")) == before)
  }

  @Test func localConstraintNamesTableAndPK() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let error = #expect(throws: FolioError.self) {
      try store.apply(table: "todos", pk: "q", op: .update, transforms: ["views": ["op": "nope"]])
    }
    #expect(error?.code == .localConstraint)
    #expect(error?.table == "todos")
    #expect(error?.pk == "q")
  }

  @Test func subscribeToAMissingTableThrows() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let one = #expect(throws: FolioError.self) { try store.collection("nope").findByID("a").subscribe() }
    #expect(one?.code == .unknownTable)
    let query = #expect(throws: FolioError.self) { try store.collection("nope").query().subscribe() }
    #expect(query?.code == .unknownTable)
    #expect(store.activeSubscriptions.isEmpty)
  }

  @Test func createTakesTablesInSwift() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let store = try Store.create(
      at: scratch.url,
      tables: ["todos": .init(path: "data/todos", order: ["lastUpdate"], columns: ["views": .counter])])
    try store.collection("todos").upsert(["id": "a", "lastUpdate": 1])
    #expect(scratch.exists(try store.file("todos", "a")))
    #expect(store.config.table(named: "todos")?.order == ["lastUpdate"])
    // Again, with one more table: the first is kept, the second added.
    let again = try Store.create(at: scratch.url, tables: ["todos": .init(), "notes": .init()])
    #expect(again.config.tables.map(\.name) == ["todos", "notes"])
    #expect(again.config.table(named: "todos")?.path == "data/todos")
  }
}

extension SwiftValuesTests {
  /// A Double from a variable is written as the same literal would be.
  @Test func doublesKeepTheirLiteralForm() throws {
    let one = 1.0
    #expect(try JSONValue(one) == JSONValue(floatLiteral: 1.0))
    #expect(try JSONValue(one) == .number("1.0"))
    #expect(JSONValue.arrayUnion([one]) == .arrayUnion([1.0] as [JSONValue]))
  }
}
