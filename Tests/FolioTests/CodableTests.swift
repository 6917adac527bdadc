import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// Issue 15 §1: Codable through Folio's own encoder and decoder.
struct CodableTests {
  struct Meta: Codable, Equatable, Sendable {
    var color: String
    var weight: Double?
  }

  struct Todo: Codable, Equatable, Sendable {
    var id: String
    var title: String
    var done = false
    var views = 0
    var big: Int64 = 0
    var tags: [String] = []
    var meta: Meta? = nil
    var history: [[Int]] = []
    var note: String? = nil
    var due: Date? = nil
  }

  static let sample = Todo(
    id: "a", title: "Buy milk", done: true, views: 7, big: 9_007_199_254_740_993, tags: ["home", "é"],
    meta: Meta(color: "red", weight: 1.5), history: [[1, 2], []], note: nil,
    due: Date(timeIntervalSince1970: 1_700_000_000.5))

  @Test func roundTripKeepsNestedTypesOptionalsArraysAndExactBigNumbers() throws {
    let json = try JSONValue(encoding: Self.sample)
    // 2^53 + 1 survives: no Double anywhere on the way.
    #expect(try json.decode(Todo.self) == Self.sample)
    #expect(json["meta"]?["weight"] == .number("1.5"))
    #expect(json["note"] == .null)  // nil is written as null by default
    #expect(json["history"] == [[1, 2], []])
    // The date is integer milliseconds, a JSON number.
    #expect(json["due"] == .number("1700000000500"))
    var omitting = JSONValueEncoder()
    omitting.nilEncoding = .omit
    #expect(try omitting.encode(Self.sample)["note"] == nil)
  }

  @Test func countersPast32BitsFollowSeed002BothWays() throws {
    struct Counter: Codable, Equatable {
      var a: Int
      var b: Int64
      var c: Int
      var d: DecimalInteger
      var e: UInt64
    }
    // seed 002 stores a result outside the 32-bit range as a decimal string.
    let stored: JSONValue = [
      "a": "5000000000", "b": "-9223372036854775808", "c": 12, "d": "123456789012345678901234567890",
      "e": .number("18446744073709551615"),
    ]
    let value = try stored.decode(Counter.self)
    #expect(value.a == 5_000_000_000)
    #expect(value.b == Int64.min)
    #expect(value.c == 12)
    #expect(value.d.description == "123456789012345678901234567890")
    #expect(value.e == UInt64.max)
    // Encoded back as the seed's rule says: the same JSON types.
    let again = try JSONValueEncoder().encode(value)
    #expect(again["a"] == .string("5000000000"))
    #expect(again["b"] == .string("-9223372036854775808"))
    #expect(again["c"] == .number("12"))
    #expect(again["d"] == .string("123456789012345678901234567890"))
    #expect(again["e"] == .string("18446744073709551615"))
    // Not counters: every integer a JSON number, every digit kept.
    var numbers = JSONValueEncoder()
    numbers.integerEncoding = .number
    #expect(try numbers.encode(value)["a"] == .number("5000000000"))
    #expect(try numbers.encode(value)["e"] == .number("18446744073709551615"))
  }

  @Test func integerDecodingRejectsWhatDoesNotFit() throws {
    #expect(throws: DecodingError.self) { try JSONValue.number("300").decode(Int8.self) }
    #expect(throws: DecodingError.self) { try JSONValue.number("1.5").decode(Int.self) }
    #expect(throws: DecodingError.self) { try JSONValue.string("12a").decode(Int.self) }
    #expect(throws: DecodingError.self) { try JSONValue.bool(true).decode(Int.self) }
    #expect(try JSONValue.number("1e3").decode(Int.self) == 1000)
    #expect(
      try JSONValue.number("99999999999999999999").decode(Decimal.self).description == "99999999999999999999")
  }

  @Test(arguments: [
    (JSONValueEncoder.DateEncoding.millisecondsSince1970, JSONValue.number("1700000000500")),
    (.secondsSince1970, .number("1700000000.5")),
    (.iso8601, .string("2023-11-14T22:13:20.500Z")),
  ])
  func dateStrategies(_ strategy: JSONValueEncoder.DateEncoding, _ expected: JSONValue) throws {
    let date = Date(timeIntervalSince1970: 1_700_000_000.5)
    var encoder = JSONValueEncoder()
    encoder.dateEncoding = strategy
    let json = try encoder.encode(["due": date])
    if case .number(let text) = expected, strategy == .secondsSince1970 {
      #expect(abs(Double(json["due"]!.numberText!)! - Double(text)!) < 1e-6)
    } else {
      #expect(json["due"] == expected)
    }
    var decoder = JSONValueDecoder()
    decoder.dateDecoding = strategy
    let back = try decoder.decode([String: Date].self, from: json)
    #expect(abs(back["due"]!.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
  }

  @Test func nonFiniteNumbersThrowInsteadOfWritingBadJSON() throws {
    #expect(throws: FolioError.self) { try JSONValue(encoding: ["x": Double.nan]) }
    #expect(throws: FolioError.self) { try JSONValue(Double.infinity) }
  }

  @Test func storeRoundTripsCodableDocuments() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    #expect(try todos.insert(Self.sample) == "a")
    #expect(try todos.findByID("a").exec(as: Todo.self) == Self.sample)
    #expect(try todos.findByID("missing").exec(as: Todo.self) == nil)
    // The file holds exact numbers.
    #expect(scratch.read(try store.file("todos", "a"))?.contains(#""big": "9007199254740993""#) == true)

    // insert refuses an existing pk, naming the table and pk.
    let error = #expect(throws: FolioError.self) { try todos.insert(Self.sample) }
    #expect(error?.code == .localConstraint)
    #expect(error?.table == "todos")
    #expect(error?.pk == "a")

    // upsert: the pk from the key column; a field made nil clears the column.
    var changed = Self.sample
    changed.meta = nil
    changed.views = 8
    #expect(try todos.upsert(changed) == "a")
    let document = try #require(try todos.findByID("a").exec())
    #expect(document["meta"] == .null)
    #expect(try document.decode(Todo.self) == changed)
    #expect(document["views", as: Int.self] == 8)
    #expect(document["title", as: Int.self] == nil)  // another type: nil
    #expect(document["nothing", as: String.self] == nil)

    try todos.upsert(Todo(id: "b", title: "Walk"))
    let all = try todos.query().orderByKey().get(as: Todo.self)
    #expect(all.map(\.id) == ["a", "b"])
  }

  @Test func typedLiveQueriesDecode() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try await todos.upsert(Todo(id: "a", title: "one"))
    var iterator = try todos.findByID("a").changes(as: Todo.self).makeAsyncIterator()
    let first = try await iterator.next()
    #expect(first?.0?.title == "one")
    #expect(first?.1.isInitial == true)
    try await todos.findByID("a").update { d in d?["title"] = "two" }
    let second = try await iterator.next()
    #expect(second?.0?.title == "two")

    var results = try todos.query().changes(as: Todo.self).makeAsyncIterator()
    #expect(try await results.next()?.0.map(\.title) == ["two"])
    try await todos.upsert(Todo(id: "b", title: "three"))
    #expect(try await results.next()?.0.map(\.title) == ["two", "three"])

    let received = Mutex<[String?]>([])
    let queue = DispatchQueue(label: "typed")
    let live = try todos.findByID("b").observeLocal(as: Todo.self, deliverOn: queue) { todo, _ in
      received.withLock { $0.append(todo?.title) }
    }
    try await todos.findByID("b").remove()
    try await waitUntil { received.withLock { $0 } == ["three", nil] }
    live.stop()
  }
}
