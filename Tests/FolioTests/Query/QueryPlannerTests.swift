import Folio
import FolioCore
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// A `where` on an indexed order path reads only the documents in the range
/// it allows, and `explain()` says so.
struct QueryPlannerTests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [n]\n"

  func store() throws -> (Store, Scratch) {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    try store.write { tx in
      for n in 0..<100 {
        _ = try tx.put(table: "t", pk: "k\(n)", document: ["n": .integer(n), "even": .bool(n % 2 == 0)])
      }
    }
    return (store, scratch)
  }

  @Test(arguments: [
    ("n > 89", 10, true), ("n >= 90", 10, true), ("n >= 10 && n < 20", 10, true), ("5 > n", 5, true),
    ("n in [3, 7]", 5, true), ("n == 42 && even", 1, true), ("n <= 2 || n > 97", 100, false),
    ("even", 100, false), ("!(n < 50)", 100, false),
  ])
  func aFilterOnTheIndexedPathNarrowsWhatIsRead(_ text: String, reads: Int, narrowed: Bool) throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let query = try store.collection("t").query().where(text)
    let plan = try query.explain()
    #expect(plan.index == "n")
    #expect(plan.narrowedByFilter == narrowed, "\(text): \(plan)")
    #expect(plan.documentsToRead == reads, "\(text): \(plan)")
    let folder = store.directory(of: try store.table(named: "t"))
    let before = QueryStatistics.documentsRead(folder: folder)
    let got = try query.get().map(\.pk)
    #expect(QueryStatistics.documentsRead(folder: folder) - before == reads, "\(text)")
    var unplanned = query
    unplanned.usesFilterBounds = false
    #expect(try unplanned.get().map(\.pk) == got)
  }

  @Test func explainNamesAScanAndACursorKeepsItsOwnBound() throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let scan = try store.collection("t").query().orderBy(child: "even").where("n != 90").explain()
    #expect(scan.fullScan && scan.documentsToRead == 100)
    #expect(scan.description == "full scan: no index on the order path; reads 100 documents")
    let paged = try store.collection("t").query().startAfter(95, key: "k95").where("n > 10 && n < 98")
    #expect(try paged.get().map(\.pk) == ["k96", "k97"])
    #expect(try paged.explain().description == "index on n, range narrowed by the filter; reads 2 documents")
  }

  /// Ordering by a path with no index, or by the key, while the filter
  /// bounds an indexed path: the index range picks the documents, which are
  /// then sorted.
  @Test(arguments: [
    ("even", "n > 90 && n != 95", 9, ["k91", "k93", "k97", "k99", "k92", "k94", "k96", "k98"]),
    ("key", "n in [12, 3]", 2, ["k12", "k3"]),
  ])
  func anotherOrderingStillReadsOnlyTheRange(_ order: String, _ text: String, reads: Int, expected: [String])
    throws
  {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let base = store.collection("t").query()
    let query = try (order == "key" ? base.orderByKey() : base.orderBy(child: order)).where(text)
    let plan = try query.explain()
    #expect(plan.index == "n" && plan.sortedAfterwards && !plan.fullScan && !plan.secondary)
    #expect(
      plan.description == "index on n, range narrowed by the filter, then sorted; reads \(reads) documents")
    let folder = store.directory(of: try store.table(named: "t"))
    let before = QueryStatistics.documentsRead(folder: folder)
    #expect(try query.get().map(\.pk) == expected)
    #expect(QueryStatistics.documentsRead(folder: folder) - before == reads)
    #expect(try query.limitToLast(2).get().map(\.pk) == Array(expected.suffix(2)))
    var unplanned = query
    unplanned.usesFilterBounds = false
    #expect(try unplanned.explain().fullScan == (order != "key"))
    #expect(try unplanned.get().map(\.pk) == expected)
  }

  /// A count whose filter the index range decides reads no document.
  @Test(arguments: [
    ("n > 89", 10, 0), ("90 <= n", 10, 0), ("n > 89 && n < 95", 5, 0), ("n > 89 && even", 5, 10),
    ("n == 42", 1, 1),
  ])
  func aCountTheRangeDecidesReadsNoDocument(_ text: String, count: Int, reads: Int) throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let folder = store.directory(of: try store.table(named: "t"))
    let query = try store.collection("t").query().where(text)
    _ = try query.explain()
    let before = QueryStatistics.documentsRead(folder: folder)
    #expect(try query.count() == count)
    #expect(QueryStatistics.documentsRead(folder: folder) - before == reads, "\(text)")
  }
}
