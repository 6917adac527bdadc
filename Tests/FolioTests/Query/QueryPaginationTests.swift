import Folio
import FolioCore
import FolioJSON
import FolioQuery
import FolioTestSupport
import Foundation
import Testing

/// Cursor paging visits every matching document exactly once (all, filtered,
/// ranged, and both), in order, however many documents share the order
/// value (the seed's `startAt` trick does not), whatever types the values
/// have, at every page size from 1 to 9.
struct QueryPaginationTests {
  @Test(arguments: ["v", "w"])
  func pagingVisitsEveryDocumentOnce(path: String) throws {
    let seed = SeededGenerator.testSeed()
    var fuzz = QueryFuzz(rng: SeededGenerator(seed: seed))
    try reportingSeed(seed) {
      for round in 0..<6 {
        var docs = fuzz.table(count: fuzz.int(0...70))
        // Order values of every type, arrays and objects included: cursors
        // take any JSON value, and arrays and objects sort as one class with
        // ties broken by pk, so paging never gets stuck on them (issue 13).
        for (pk, doc) in docs { docs[pk]!["w"] = doc["v"] }
        let (store, scratch) = try makeFuzzStore(docs)
        defer { scratch.remove() }
        let sorted = Reference.sorted(docs) { _, doc in doc[path] }
        let base = try store.collection("t").query().orderBy(child: path)
        func cursor(_ doc: Document) -> JSONValue { doc[path] ?? .null }

        // A filter, and a range between two values the table holds.
        let filters: [(String, (JSONObject) -> Bool)] = [
          ("n < 5", { ($0["n"]?.intValue ?? 0) < 5 }),
          (#"tags contains "x""#, { $0["tags"]?.arrayValue?.contains(.string("x")) ?? false }),
          ("exists(o.a.b)", { QueryDifferentialTests.at($0, "o.a.b") != nil }),
          (
            #"s contains "a""#,
            { doc in
              guard case .string(let text)? = doc["s"] else { return false }
              return QueryDifferentialTests.bytesContain(text, "a")
            }
          ),
        ]
        let (filterText, filterTest) = filters[fuzz.int(0...filters.count - 1)]
        let values = sorted.map { docs[$0]![path] ?? .null }
        var (low, high) =
          values.isEmpty
          ? (fuzz.scalar(), fuzz.scalar())
          : (values.randomElement(using: &fuzz.rng)!, values.randomElement(using: &fuzz.rng)!)
        if Reference.compare(low, high) > 0 { swap(&low, &high) }
        func inRange(_ doc: JSONObject) -> Bool {
          Reference.compare(doc[path], low) >= 0 && Reference.compare(doc[path], high) <= 0
        }

        /// How a variant starts and ends: the range's own bound, or the cursor.
        struct Variant {
          var name: String
          var query: Query
          var start: (Query) throws -> Query
          var end: (Query) throws -> Query
          var expected: [String]
        }
        let ranged = { (q: Query) in try q.startAt(low) }
        let rangeEnd = { (q: Query) in try q.endAt(high) }
        let none = { (q: Query) in q }
        let filtered = try base.where(filterText)
        let variants = [
          Variant(name: "all", query: base, start: none, end: none, expected: sorted),
          Variant(
            name: "where \(filterText)", query: filtered, start: none, end: none,
            expected: sorted.filter { filterTest(docs[$0]!) }),
          Variant(
            name: "range \(low)...\(high)", query: base, start: ranged, end: rangeEnd,
            expected: sorted.filter { inRange(docs[$0]!) }),
          Variant(
            name: "where \(filterText), range \(low)...\(high)", query: filtered, start: ranged,
            end: rangeEnd,
            expected: sorted.filter { filterTest(docs[$0]!) && inRange(docs[$0]!) }),
        ]
        for variant in variants {
          let context = "seed \(seed) round \(round) \(variant.name)"
          for size in Array(1...9) + [50] {
            // Forwards: the range's end stays, the cursor replaces its start.
            var forward: [String] = []
            var page = try variant.end(variant.start(variant.query)).limitToFirst(size).get()
            while !page.isEmpty {
              forward += page.map(\.pk)
              #expect(page.count <= size, "\(context) size \(size) forward")
              let last = page.last!
              let after = try variant.query.startAfter(cursor(last), key: last.pk)
              page = try variant.end(after).limitToFirst(size).get()
              if forward.count > docs.count { break }
            }
            // Every matching document exactly once, in order.
            #expect(Set(forward).count == forward.count, "\(context) size \(size) forward: a document twice")
            #expect(forward == variant.expected, "\(context) size \(size) forward")

            var backward: [String] = []
            page = try variant.end(variant.start(variant.query)).limitToLast(size).get()
            while !page.isEmpty {
              backward = page.map(\.pk) + backward
              #expect(page.count <= size, "\(context) size \(size) backward")
              let first = page.first!
              let before = try variant.query.endBefore(cursor(first), key: first.pk)
              page = try variant.start(before).limitToLast(size).get()
              if backward.count > docs.count { break }
            }
            #expect(
              Set(backward).count == backward.count, "\(context) size \(size) backward: a document twice")
            #expect(backward == variant.expected, "\(context) size \(size) backward")
          }
        }
      }
    }
  }
}
