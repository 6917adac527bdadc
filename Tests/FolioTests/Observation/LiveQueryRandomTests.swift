import Folio
import FolioCore
import FolioJSON
import FolioQuery
import FolioTestSupport
import Foundation
import Testing

/// Random transactions against live queries of every shape: after each
/// one, the results delivered must be what running the query gives.
struct LiveQueryRandomTests {
  static let yaml = """
    version: 1
    tables:
      items:
        order: [rank]
      notes: {}
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
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
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
    // An event too many would come before the fence's.
    #expect(try fence.pass())
    #expect(recorder.all.count == expected.count, "seed \(seed)")
    #expect(delivered.map { $0.map(\.pk) } == expected.map { $0.map(\.pk) }, "seed \(seed)")
    #expect(delivered == expected, "seed \(seed)")
  }

  /// Many windows at once, of every shape, with random bounds: a commit is
  /// handed only to the windows the observer index names, so each must
  /// still see exactly its query's results.
  @Test func manyWindowsAtOnceMatchTheirQueries() throws {
    let seed =
      ProcessInfo.processInfo.environment["FOLIO_TEST_SEED"].flatMap(UInt64.init)
      ?? UInt64.random(in: 0...UInt64.max)
    var rng = ObservationRandom(seed: seed)
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    try store.write { tx in
      for i in 0..<30 {
        try tx.apply(table: "items", pk: "p\(i)", op: .insert, columns: ["rank": .integer(random(12))])
      }
    }
    let base = try store.collection("items").query().orderBy(child: "rank")
    var queries: [Query] = []
    for n in 0..<24 {
      let bound = JSONValue.integer(random(12))
      let k = 1 + random(4)
      let query: Query =
        switch n % 8 {
        case 0: try base.startAt(bound).limitToFirst(k)
        case 1: try base.endAt(bound).limitToLast(k)
        case 2: try base.startAfter(bound, key: "p\(random(30))").limitToFirst(k)
        case 3: try base.endBefore(bound, key: "p\(random(30))").limitToLast(k)
        case 4: try base.equalTo(bound)
        case 5: try base.where("flag == true").startAt(bound).limitToFirst(k)
        case 6:
          try store.collection("items").query().orderByKey().startAt(.string("p\(random(30))")).limitToFirst(
            k)
        default: try base.startAt(bound).endAt(.integer(random(12))).limitToLast(k)
        }
      queries.append(query)
    }
    let recorders = queries.map { _ in EventRecorder<[Document]>() }
    var live: [LiveQuery] = []
    for (query, recorder) in zip(queries, recorders) {
      live.append(try query.observeLocal { documents, _ in recorder.append(documents) })
    }
    defer { for query in live { query.stop() } }
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    var expected = try queries.map { [try $0.get()] }
    for _ in 0..<100 {
      try store.write { tx in
        for _ in 0..<(1 + random(2)) {
          let pk = "p\(random(34))"
          if random(4) == 0 {
            _ = try tx.remove(table: "items", pk: pk)
          } else {
            try tx.apply(
              table: "items", pk: pk, op: .upsert,
              columns: ["rank": .integer(random(12)), "flag": .bool(random(2) == 0)])
          }
        }
      }
      for (i, query) in queries.enumerated() {
        let now = try query.get()
        if now != expected[i].last { expected[i].append(now) }
      }
    }
    for (i, recorder) in recorders.enumerated() {
      let delivered = recorder.wait(for: expected[i].count)
      #expect(delivered.map { $0.map(\.pk) } == expected[i].map { $0.map(\.pk) }, "seed \(seed), window \(i)")
    }
    // An event too many, for any window, would come before the fence's.
    #expect(try fence.pass())
    for (i, recorder) in recorders.enumerated() {
      #expect(recorder.all == expected[i], "seed \(seed), window \(i)")
    }
  }
}
