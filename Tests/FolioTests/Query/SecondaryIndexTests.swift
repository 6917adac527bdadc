import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// `indexes:` in folio.yaml: more indexes, kept like the order keys', that
/// filters and orderings use.
@Suite(.serialized)
struct SecondaryIndexTests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [n]\n    indexes: [c, o.d]\n"

  /// Values of `c` of every kind, so that the index orders them by the
  /// Firebase comparator.
  static let mixed: [JSONValue?] = [
    nil, .null, false, true, -3, 0, 1, "1.5", .number("1.5"), 2, "", "A", "a", "b", ["x"], ["k": 1], "ä",
  ]

  func store() throws -> (Store, Scratch) {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    try store.write { tx in
      for i in 0..<120 {
        var doc: JSONObject = ["n": .integer(i)]
        if let c = Self.mixed[i % Self.mixed.count] { doc["c"] = c }
        doc["o"] = ["d": .integer(i % 7)]
        _ = try tx.put(table: "t", pk: "k\(i)", document: .object(doc))
      }
    }
    return (store, scratch)
  }

  /// The pks a query returns, and that they equal the unplanned query's.
  func pks(_ query: Query) throws -> [String] {
    var unplanned = query
    unplanned.usesFilterBounds = false
    let got = try query.get().map(\.pk)
    let plan = try query.explain()
    #expect(try unplanned.get().map(\.pk) == got, "\(plan)")
    return got
  }

  @Test(arguments: [
    ("c == 1", 7), ("c == \"a\"", 7), ("c >= -3 && c < 1", 14), ("c in [false, \"b\"]", 14),
    // Like with like: the range holds only the literal's kind, so neither
    // null, booleans nor strings are read for `c < 2`, nor arrays for `c > "a"`.
    ("c > \"a\"", 14), ("c < 2", 28), ("c >= true && c < 1", 0), ("c >= false", 14),
    ("o.d == 3", 17), ("c == null", 15),
  ])
  func filtersReadOnlyTheSecondaryRange(_ text: String, reads: Int) throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let query = try store.collection("t").query().where(text)
    let plan = try query.explain()
    #expect(plan.secondary && plan.sortedAfterwards && plan.narrowedByFilter, "\(plan)")
    #expect(plan.documentsToRead == reads, "\(text): \(plan)")
    #expect(
      plan.description.hasPrefix(
        "secondary index on \(plan.index!), range narrowed by the filter, then sorted"))
    let folder = store.directory(of: try store.table(named: "t"))
    let before = QueryStatistics.documentsRead(folder: folder)
    let got = try query.get()
    #expect(QueryStatistics.documentsRead(folder: folder) - before == reads)
    let predicate = try Predicate(parsing: text)
    let all = try store.collection("t").query().where("exists(n)").get()
    #expect(got.map(\.pk) == all.filter { predicate.matches($0.value) }.map(\.pk))
    #expect(try pks(query) == got.map(\.pk))
  }

  @Test func orderingByASecondaryIndexFollowsTheFirebaseComparator() throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let query = try store.collection("t").query().orderBy(child: "c")
    #expect(try query.explain().description == "secondary index on c; reads 120 documents")
    let values = try query.get().map { OrderValue($0.value["c"]) }
    for (a, b) in zip(values, values.dropFirst()) { #expect(a.compare(b) <= 0) }
    #expect(try query.limitToFirst(3).get().map(\.pk) == ["k0", "k1", "k102"])
  }

  @Test func aLimitedPageByTheOrderKeyKeepsItsIndex() throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    // Most documents match: walking n to the limit reads fewer than the
    // range of o.d would.
    let query = try store.collection("t").query().where("o.d < 6").limitToFirst(3)
    let plan = try query.explain()
    #expect(plan.index == "n" && !plan.sortedAfterwards, "\(plan)")
    #expect(try pks(query) == ["k0", "k1", "k2"])
    // Few match: the secondary range is the smaller read.
    let rare = try store.collection("t").query().where("c == \"ä\"").limitToFirst(3)
    #expect(try rare.explain().index == "c")
    #expect(try pks(rare) == ["k16", "k33", "k50"])
  }

  @Test func keptUpToDateAndPersistedLikeTheOrderIndex() throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let query = try store.collection("t").query().where("c == \"zz\"")
    #expect(try pks(query) == [])
    // A mutation, then an edit behind Folio's back (in place), then a delete.
    try store.apply(table: "t", pk: "k5", op: .update, columns: ["c": "zz"])
    #expect(try pks(query) == ["k5"])
    try scratch.write(try store.file("t", "k7"), "{\"id\": \"k7\", \"n\": 7, \"c\": \"zz\"}\n")
    #expect(try pks(query) == ["k5", "k7"])
    try FileManager.default.removeItem(at: scratch.url.appending(path: try store.file("t", "k5")))
    #expect(try pks(query) == ["k7"])
    // One index file holds the order key and both secondary paths.
    let base = try #require(IndexBase(contentsOf: store.privateDirectory + "/index/t-t.base"))
    #expect(base.keyCount == 3 && base.signature.hasSuffix("n\u{0}c\u{0}o.d"))
    // A fresh handle (as a new process would) uses it as it is.
    let again = try Store(at: scratch.url)
    #expect(try pks(again.collection("t").query().where("c == \"zz\"")) == ["k7"])
  }

  @Test func changingTheIndexesRebuildsTheIndex() throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    #expect(try store.collection("t").query().where("c == 2").count() == 7)
    let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [n]\n    indexes: [o.d]\n"
    try scratch.write("folio.yaml", withTestLayout(yaml))
    let again = try Store(at: scratch.url)
    let plan = try again.collection("t").query().where("c == 2").explain()
    #expect(plan.index == "n" && !plan.narrowedByFilter)
    #expect(try again.collection("t").query().where("c == 2").count() == 7)
    let base = try #require(IndexBase(contentsOf: store.privateDirectory + "/index/t-t.base"))
    #expect(base.keyCount == 2)
  }
}
