import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// One document file that does not parse never takes a query down: the
/// rest is answered, and the query says which files it left out.
@Suite(.serialized)
struct LeftOutDocumentTests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [rank]\n"

  /// Ten documents, then two broken as an editor leaves them: a save cut
  /// short and a stray comma.
  func makeTable() throws -> (Store, Scratch) {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    try store.write { tx in
      for i in 0..<10 {
        try tx.apply(table: "t", pk: "d\(i)", op: .insert, columns: ["rank": .integer(i)])
      }
    }
    _ = try store.collection("t").query().get()  // the index, built while all parse
    try scratch.write(try store.file("t", "d3"), "{\n  \"id\": \"d3\",\n  \"rank\": 3")
    try scratch.write(try store.file("t", "d7"), "{\"id\": \"d7\",, \"rank\": 7}\n")
    return (store, scratch)
  }

  /// What the query says of the two broken files of `store`.
  static func expected(_ store: Store) throws -> [String] {
    [
      try store.file("t", "d3") + ":3:12: error: expected ',' or '}' after object member, found end of input",
      try store.file("t", "d7") + ":1:13: error: expected an object key after ',', found ','",
    ]
  }

  @Test(arguments: ["plain", "by key", "filtered", "by a path with no index", "limited", "fresh handle"])
  func theRestIsAnsweredAndTheFilesNamed(_ shape: String) throws {
    let (store, scratch) = try makeTable()
    defer { scratch.remove() }
    let handle = shape == "fresh handle" ? try Store(at: scratch.url) : store
    var query = handle.collection("t").query()
    var expected = ["d0", "d1", "d2", "d4", "d5", "d6", "d8", "d9"]
    switch shape {
    case "by key": query = try query.orderByKey()
    case "filtered":
      query = try query.where("rank > 4")
      expected = ["d5", "d6", "d8", "d9"]
    case "by a path with no index": query = try query.orderBy(child: "other")
    case "limited":
      query = try query.limitToFirst(3)
      expected = ["d0", "d1", "d2"]
    default: break
    }
    var skipped: [FolioError] = []
    #expect(try query.get(skipped: &skipped).map(\.pk) == expected, "\(shape)")
    #expect(skipped.map(\.headline) == (try Self.expected(store)), "\(shape)")
    #expect(try query.get().map(\.pk) == expected, "get() answers the rest too")
    var counted: [FolioError] = []
    #expect(try query.count(skipped: &counted) == expected.count, "\(shape)")
    #expect(counted.map(\.headline) == (try Self.expected(store)), "\(shape)")
  }

  @Test func aFixedFileComesBack() throws {
    let (store, scratch) = try makeTable()
    defer { scratch.remove() }
    var skipped: [FolioError] = []
    #expect(try store.collection("t").query().get(skipped: &skipped).count == 8)
    try scratch.write(try store.file("t", "d3"), "{\"id\": \"d3\", \"rank\": 3}\n")
    try scratch.write(try store.file("t", "d7"), "{\"id\": \"d7\", \"rank\": 7}\n")
    skipped = []
    #expect(try store.collection("t").query().get(skipped: &skipped).count == 10)
    #expect(skipped.isEmpty)
    var cursor = try store.collection("t").query().documents()
    while try cursor.next() != nil {}
    #expect(cursor.skipped.isEmpty)
  }

  @Test func aFileBrokenBeforeTheIndexIsBuiltIsLeftOutToo() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try scratch.write(try store.file("t", "a"), "{\"id\": \"a\", \"rank\": 1}\n")
    try scratch.write(try store.file("t", "b"), "[1, 2]\n")
    var skipped: [FolioError] = []
    #expect(try store.collection("t").query().get(skipped: &skipped).map(\.pk) == ["a"])
    let b = try store.file("t", "b")
    #expect(skipped.map(\.headline) == [b + ":1:1: error: a document must be a JSON object, not an array"])
  }
}
