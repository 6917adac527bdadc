import Foundation
import Testing

@testable import Folio

/// Query live queries: limited windows slide, and updates carry index sets
/// and child events (seed `004_*`).
struct QueryLiveQueryTests {
  typealias Event = (documents: [Document], event: LiveQueryEvent)

  /// An event as text, so golden sequences read as they were written.
  static func describe(_ event: Event) -> String {
    let pks = event.documents.map(\.pk).joined(separator: ",")
    guard case .update(let u) = event.event else { return "initial [\(pks)]" }
    let children = u.childEvents.map { c in
      "\(c.kind.rawValue.dropFirst(6)) \(c.key)<\(c.prevKey ?? "-")"
    }.joined(separator: ", ")
    let moves = u.moves.map { "\($0.from)>\($0.to)" }.joined(separator: ",")
    return "[\(pks)] del\(u.deletions) ins\(u.insertions) upd\(u.updates) mov[\(moves)] | \(children)"
  }

  func seed(_ store: Store) throws {
    try store.write { tx in
      for (i, pk) in ["a", "b", "c", "d", "e"].enumerated() {
        try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["lastUpdate": .integer(i + 1)])
      }
    }
  }

  func set(_ store: Store, _ pk: String, _ columns: [String: JSONValue]) throws {
    try store.apply(table: "todos", pk: pk, op: .upsert, columns: columns)
  }

  @Test func limitToFirstWindowSlides() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let recorder = EventRecorder<Event>()
    let query = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToFirst(3)
    let live = try query.observeLocal { recorder.append(($0, $1)) }
    defer { live.stop() }
    recorder.wait(for: 1)
    try store.collection("todos").findByID("b").remove()  // a member goes: d slides in
    try set(store, "e", ["lastUpdate": 10])  // outside the window: no event
    try set(store, "c", ["lastUpdate": 20])  // moves out: e comes in
    try set(store, "f", ["lastUpdate": 0])  // comes in first: e drops out
    try set(store, "a", ["title": "x"])  // changes in place
    try store.write { tx in  // one transaction, one event
      try tx.apply(table: "todos", pk: "d", op: .update, columns: ["lastUpdate": -1])
      try tx.apply(table: "todos", pk: "f", op: .remove)
    }
    let expected = [
      "initial [a,b,c]",
      "[a,c,d] del[1] ins[2] upd[] mov[] | removed b<a, added d<c",
      "[a,d,e] del[1] ins[2] upd[] mov[] | removed c<a, added e<d",
      "[f,a,d] del[2] ins[0] upd[] mov[] | removed e<d, added f<-",
      "[f,a,d] del[] ins[] upd[1] mov[] | changed a<f",
      "[d,a,e] del[0] ins[2] upd[0] mov[2>0] | removed f<-, added e<a, moved d<-, changed d<-",
    ]
    recorder.wait(for: expected.count)
    Thread.sleep(forTimeInterval: 0.1)
    #expect(recorder.all.map(Self.describe) == expected)
  }

  @Test func limitToLastWindowSlides() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let recorder = EventRecorder<Event>()
    let query = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToLast(2)
    let live = try query.observeLocal { recorder.append(($0, $1)) }
    defer { live.stop() }
    recorder.wait(for: 1)
    try store.collection("todos").findByID("e").remove()
    try set(store, "a", ["lastUpdate": 0])  // outside the window
    try set(store, "b", ["lastUpdate": 9])
    try set(store, "d", ["title": "x"])
    let expected = [
      "initial [d,e]",
      "[c,d] del[1] ins[0] upd[] mov[] | removed e<d, added c<-",
      "[d,b] del[0] ins[1] upd[] mov[] | removed c<-, added b<d",
      "[d,b] del[] ins[] upd[0] mov[] | changed d<-",
    ]
    recorder.wait(for: expected.count)
    Thread.sleep(forTimeInterval: 0.1)
    #expect(recorder.all.map(Self.describe) == expected)
  }

  @Test func filteredQueryFollowsTheFilter() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let recorder = EventRecorder<Event>()
    let live = try store.collection("todos").query().where("done == true").observeLocal {
      recorder.append(($0, $1))
    }
    defer { live.stop() }
    recorder.wait(for: 1)
    try set(store, "c", ["done": true])
    try set(store, "a", ["done": false])  // still filtered out
    try set(store, "a", ["done": true])
    try set(store, "c", ["done": false])
    let expected = [
      "initial []",
      "[c] del[] ins[0] upd[] mov[] | added c<-",
      "[a,c] del[] ins[0] upd[] mov[] | added a<-",
      "[a] del[1] ins[] upd[] mov[] | removed c<a",
    ]
    recorder.wait(for: expected.count)
    Thread.sleep(forTimeInterval: 0.1)
    #expect(recorder.all.map(Self.describe) == expected)
  }

  @Test func nextSignalCoalescesQueryUpdates() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let recorder = EventRecorder<Event>()
    let signals = EventRecorder<@Sendable () -> Void>()
    let query = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToFirst(2)
    let live = try query.observeLocalWithNextSignal { documents, event, signalNext in
      recorder.append((documents, event))
      signals.append(signalNext)
    }
    defer { live.stop() }
    signals.wait(for: 1)[0]()
    try set(store, "a", ["lastUpdate": 100])  // delivered at once: [b,c]
    recorder.wait(for: 2)
    try set(store, "b", ["lastUpdate": 100])  // waits: [c,d]
    try set(store, "c", ["lastUpdate": 100])  // waits: [d,e]
    Thread.sleep(forTimeInterval: 0.1)
    #expect(recorder.all.count == 2)
    signals.all[1]()
    let events = recorder.wait(for: 3)
    try #require(events.count == 3)
    // One update from what was delivered ([b,c]) to the latest ([d,e]).
    #expect(
      Self.describe(events[2])
        == "[d,e] del[0, 1] ins[0, 1] upd[] mov[] | removed b<-, removed c<b, added d<-, added e<d")
  }
}
