import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

/// Every sentence of seed `002_*`, with concrete values.
struct TransformTests {
  struct Case: CustomTestStringConvertible, Sendable {
    var name: String
    var start: JSONValue?  // the column's value before; nil: missing
    var columns: [String: JSONValue] = [:]
    var transform: JSONValue
    var expected: JSONValue?  // the column's value after; nil: missing
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(name: "adds by to the current value", start: 5, transform: .increment(3), expected: 8),
    Case(name: "a missing column counts as 0", start: nil, transform: .increment(4), expected: 4),
    Case(name: "a null column counts as 0", start: .null, transform: .increment(-2), expected: -2),
    Case(
      name: "by as a decimal string", start: 10, transform: ["op": "increment", "by": "-15"],
      expected: -5),
    Case(
      name: "2147483647 + 1 switches to a string", start: 2_147_483_647, transform: .increment(1),
      expected: "2147483648"),
    Case(
      name: "-2147483648 - 1 switches to a string", start: -2_147_483_648, transform: .increment(-1),
      expected: "-2147483649"),
    Case(
      name: "\"2147483648\" + -1 is a number again", start: "2147483648", transform: .increment(-1),
      expected: 2_147_483_647),
    Case(
      name: "by of any size", start: 1,
      transform: ["op": "increment", "by": "99999999999999999999999"],
      expected: "100000000000000000000000"),
    Case(
      name: "big number literal by", start: .number("-5"),
      transform: ["op": "increment", "by": .number("123456789012345678901234567890")],
      expected: "123456789012345678901234567885"),
    Case(
      name: "a by of null counts as zero", start: 7, transform: ["op": "increment", "by": nil],
      expected: 7),
    Case(
      name: "a by of null on a missing column gives 0", start: nil,
      transform: ["op": "increment", "by": nil], expected: 0),
    Case(name: "current value 2.5 is left as is", start: 2.5, transform: .increment(1), expected: 2.5),
    Case(name: "current value true is left as is", start: true, transform: .increment(1), expected: true),
    Case(
      name: "current value \"abc\" is left as is", start: "abc", transform: .increment(1), expected: "abc"),
    Case(name: "a decimal-integer string counts", start: "41", transform: .increment(1), expected: 42),
    Case(name: "an array is left as is", start: [1], transform: .increment(1), expected: [1]),
    Case(
      name: "arrayUnion appends values not held", start: ["a", "b"],
      transform: .arrayUnion(["b", "c", "c"]), expected: ["a", "b", "c"]),
    Case(
      name: "arrayUnion compares by canonical JSON form", start: [["a": 1, "b": 2]],
      transform: .arrayUnion([["b": 2, "a": 1]]), expected: [["a": 1, "b": 2]]),
    Case(
      name: "arrayUnion: 1 and 1.0 differ", start: [1], transform: .arrayUnion([1.0]),
      expected: [1, 1.0]),
    Case(
      name: "arrayUnion on a missing column starts from []", start: nil,
      transform: .arrayUnion(["x"]), expected: ["x"]),
    Case(
      name: "arrayUnion on a non-array starts from []", start: "scalar",
      transform: .arrayUnion(["x"]), expected: ["x"]),
    Case(
      name: "arrayRemove drops every equal member", start: ["a", "b", "a", ["k": 1]],
      transform: .arrayRemove(["a", ["k": 1]]), expected: ["b"]),
    Case(
      name: "arrayRemove on a missing column yields []", start: nil, transform: .arrayRemove(["x"]),
      expected: []),
    Case(
      name: "arrayRemove on a non-array yields []", start: 12, transform: .arrayRemove(["x"]),
      expected: []),
    Case(
      name: "assignments apply first, transforms on top", start: 1, columns: ["views": 10],
      transform: .increment(5), expected: 15),
  ]

  @Test(arguments: cases)
  func update(_ testCase: Case) throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    var initial: [String: JSONValue] = [:]
    if let start = testCase.start { initial["views"] = start }
    try store.apply(table: "notes", pk: "n1", op: .insert, columns: initial)
    let results = try store.apply(
      table: "notes", pk: "n1", op: .update, columns: testCase.columns,
      transforms: ["views": testCase.transform])
    let document = try #require(try store.collection("notes").findByID("n1").exec())
    #expect(document["views"] == testCase.expected)
    #expect(results.allSatisfy { $0.pk == "n1" })
    // The op replays to the same bytes: apply the logged op to the old document.
    let op = try #require(try store.ops(table: "notes", pk: "n1").last)
    var before = JSONObject()
    before["id"] = "n1"
    if let start = testCase.start { before["views"] = start }
    let replayed = op.mutation.apply(to: before, pk: "n1", key: "id").document
    #expect(replayed == document.value)
  }

  @Test func incrementResults() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 2_147_483_647, "t": ["x"]])
    let results = try store.apply(
      table: "notes", pk: "a", op: .update, columns: ["done": true],
      transforms: ["v": .increment(1), "t": .arrayUnion(["x", "y"]), "u": .arrayRemove(["q"])])
    #expect(
      results == [
        .set(pk: "a", path: "done", value: true),
        .unioned(pk: "a", path: "t", values: ["y"]),
        .removedMembers(pk: "a", path: "u", values: []),
        .incremented(pk: "a", path: "v", by: "1"),
      ])
    let doc = try #require(try store.collection("notes").findByID("a").exec())
    #expect(doc["v"] == "2147483648")
    #expect(doc["u"] == [])
  }

  static let malformed: [(JSONValue, String)] = [
    (5, "must be an object"),
    (["by": 1], "has no 'op'"),
    (["op": 3, "by": 1], "'op' that is a number"),
    (["op": "multiply", "by": 2], "unknown op 'multiply'"),
    (["op": "increment"], "has no 'by'"),
    (["op": "increment", "by": 1.5], "not a signed integer"),
    (["op": "increment", "by": "abc"], "not a signed decimal integer"),
    (["op": "increment", "by": "1.5"], "not a signed decimal integer"),
    (["op": "increment", "by": "+1"], "not a signed decimal integer"),
    (["op": "increment", "by": .number("1e3")], "not a signed integer"),
    (["op": "increment", "by": true], "a boolean"),
    (["op": "arrayUnion"], "has no 'values'"),
    (["op": "arrayRemove", "values": "x"], "needs an array"),
  ]

  @Test(arguments: malformed)
  func malformedTransformWritesNothing(_ transform: JSONValue, _ fragment: String) throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 1])
    let before = scratch.read(try store.file("notes", "a"))
    let opsBefore = try store.ops().count
    for op in Mutation.Kind.allCases where op != .remove {
      // Both forms, the dictionary and the byte-keyed JSONObject, go
      // through one body, and the error names the document either way.
      let errors = [
        #expect(throws: FolioError.self) {
          try store.apply(
            table: "notes", pk: "a", op: op, columns: ["w": 2],
            transforms: ["ok": .increment(1), "v": transform])
        },
        #expect(throws: FolioError.self) {
          let transforms: JSONObject = ["ok": .increment(1), "v": transform]
          try store.apply(
            table: "notes", pk: "a", op: op, columns: ["w": 2] as JSONObject, transforms: transforms)
        },
      ]
      for error in errors {
        #expect(error?.code == .localConstraint)
        #expect(error?.description.contains(fragment) == true, "\(error?.description ?? "")")
        #expect(error?.description.hasPrefix("error: LOCAL_CONSTRAINT: ") == true)
        #expect(error?.table == "notes" && error?.pk == "a", "\(String(describing: error))")
      }
    }
    #expect(scratch.read(try store.file("notes", "a")) == before)
    #expect(try store.ops().count == opsBefore)
  }

  @Test func insertWritesPlainColumnsOnly() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let results = try store.apply(
      table: "notes", pk: "a", op: .insert, columns: ["title": "x"],
      transforms: ["views": .increment(1), "tags": .arrayUnion(["t"])])
    #expect(results == [.set(pk: "a", path: "title", value: "x")])
    let doc = try #require(try store.collection("notes").findByID("a").exec())
    #expect(doc.value == ["id": "a", "title": "x"])
    #expect(try store.ops(table: "notes", pk: "a").first?.mutation.transforms.isEmpty == true)
  }

  @Test func insertOfAnExistingPKFails() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert)
    let error = #expect(throws: FolioError.self) {
      try store.apply(table: "notes", pk: "a", op: .insert, columns: ["x": 1])
    }
    #expect(error?.code == .localConstraint)
  }

  @Test func updateOfAMissingDocumentReturnsNothing() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let results = try store.apply(
      table: "notes", pk: "ghost", op: .update, columns: ["x": 1], transforms: ["v": .increment(1)])
    #expect(results.isEmpty)
    #expect(!scratch.exists(try store.file("notes", "ghost")))
    #expect(try store.ops().isEmpty)
  }

  @Test func upsertCreatesThenTransforms() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(
      table: "notes", pk: "a", op: .upsert, columns: ["x": 1], transforms: ["v": .increment(2)])
    try store.apply(table: "notes", pk: "a", op: .upsert, transforms: ["v": .increment(2)])
    let doc = try #require(try store.collection("notes").findByID("a").exec())
    #expect(doc.value == ["id": "a", "x": 1, "v": 4])
  }

  @Test func removeIsRecorded() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert)
    #expect(try store.apply(table: "notes", pk: "a", op: .remove) == [.removed(pk: "a", path: "")])
    #expect(try store.apply(table: "notes", pk: "a", op: .remove) == [])
    #expect(!scratch.exists(try store.file("notes", "a")))
    #expect(try store.ops().map(\.mutation.kind) == [.insert, .remove])
  }

  @Test func keyColumnMustMatchThePK() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    #expect(throws: FolioError.self) {
      try store.apply(table: "notes", pk: "a", op: .insert, columns: ["id": "b"])
    }
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["id": "a"])
    #expect(throws: FolioError.self) {
      try store.apply(table: "notes", pk: "a", op: .update, transforms: ["id": .increment(1)])
    }
  }
}
