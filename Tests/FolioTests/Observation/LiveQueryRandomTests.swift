import Foundation
import Testing

@testable import Folio

/// Random transactions against live queries of every shape: after each
/// one, the results delivered must be what running the query gives.
struct LiveQueryRandomTests {
  static let yaml = """
    version: 1
    tables:
      items:
        order: [rank]
    """

  @Test(arguments: ["first", "last", "startAtFirst", "filteredLast", "unlimited", "byKey"])
  func deliveredResultsMatchTheQuery(shape: String) throws {
    let seed =
      ProcessInfo.processInfo.environment["FOLIO_TEST_SEED"].flatMap(UInt64.init)
      ?? UInt64.random(in: 0...UInt64.max)
    var rng = ObservationRandom(seed: seed)
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    try store.write { tx in
      for i in 0..<12 {
        try tx.apply(table: "items", pk: "p\(i)", op: .insert, columns: ["rank": .integer(i % 6)])
      }
    }
    let base = store.collection("items").query()
    let query: Query =
      switch shape {
      case "first": try base.orderBy(child: "rank").limitToFirst(2)
      case "last": try base.orderBy(child: "rank").limitToLast(4)
      case "startAtFirst": try base.orderBy(child: "rank").startAt(2).limitToFirst(3)
      case "filteredLast": try base.orderBy(child: "rank").where("flag == true").limitToLast(3)
      case "unlimited": try base.orderBy(child: "rank").endBefore(4)
      default: try base.orderByKey().limitToFirst(5)
      }
    let recorder = EventRecorder<[Document]>()
    let live = try query.observeLocal { documents, _ in recorder.append(documents) }
    defer { live.stop() }
    var expected = [try query.get()]
    for _ in 0..<80 {
      try store.write { tx in
        for _ in 0..<(1 + random(3)) {
          let pk = "p\(random(16))"
          if random(3) == 0 {
            _ = try tx.remove(table: "items", pk: pk)
          } else {
            try tx.apply(
              table: "items", pk: pk, op: .upsert,
              columns: [
                "rank": .integer(random(10)), "flag": .bool(random(2) == 0), "v": .integer(random(3)),
              ])
          }
        }
      }
      let now = try query.get()
      if now != expected.last { expected.append(now) }
    }
    let delivered = recorder.wait(for: expected.count)
    Thread.sleep(forTimeInterval: 0.05)
    #expect(recorder.all.count == expected.count, "seed \(seed)")
    #expect(delivered.map { $0.map(\.pk) } == expected.map { $0.map(\.pk) }, "seed \(seed)")
    #expect(delivered == expected, "seed \(seed)")
  }
}
