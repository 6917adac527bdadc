import Foundation
import Testing

@testable import Folio

/// Cursor paging visits every document exactly once, in order, however many
/// documents share the order value (the seed's `startAt` trick does not).
struct QueryPaginationTests {
  @Test(arguments: ["v", "w"])
  func pagingVisitsEveryDocumentOnce(path: String) throws {
    let seed = SeededGenerator.testSeed()
    var fuzz = QueryFuzz(rng: SeededGenerator(seed: seed))
    for round in 0..<6 {
      var docs = fuzz.table(count: fuzz.int(0...70))
      // Range values cannot be arrays or objects, so paging tables hold scalars.
      for (pk, doc) in docs {
        if case .array? = doc["v"] { docs[pk]!["v"] = .integer(fuzz.int(0...3)) }
        if case .object? = doc["v"] { docs[pk]!["v"] = "shared" }
        docs[pk]!["w"] = docs[pk]!["v"]
      }
      let (store, scratch) = try makeFuzzStore(docs)
      defer { scratch.remove() }
      let expected = Reference.sorted(docs) { _, doc in doc[path] }
      let base = try store.collection("t").query().orderBy(child: path)
      func cursor(_ doc: Document) -> JSONValue { doc[path] ?? .null }
      for size in [1, 2, 7, 50] {
        var forward: [String] = []
        var page = try base.limitToFirst(size).get()
        while !page.isEmpty {
          forward += page.map(\.pk)
          #expect(page.count <= size)
          let last = page.last!
          page = try base.startAfter(cursor(last), key: last.pk).limitToFirst(size).get()
          if forward.count > docs.count { break }
        }
        #expect(forward == expected, "seed \(seed) round \(round) size \(size) forward")

        var backward: [String] = []
        page = try base.limitToLast(size).get()
        while !page.isEmpty {
          backward = page.map(\.pk) + backward
          let first = page.first!
          page = try base.endBefore(cursor(first), key: first.pk).limitToLast(size).get()
          if backward.count > docs.count { break }
        }
        #expect(backward == expected, "seed \(seed) round \(round) size \(size) backward")
      }
    }
  }
}
