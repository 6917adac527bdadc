import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

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
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    try store.collection("todos").findByID("b").remove()  // a member goes: d slides in
    try set(store, "e", ["lastUpdate": 10])  // outside the window: no event
    try set(store, "c", ["lastUpdate": 20])  // moves out: e comes in
    try set(store, "f", ["lastUpdate": 0])  // comes in first: e drops out
    try set(store, "a", ["title": "x"])  // changes in place
    try store.write { tx in  // one transaction, one event
      try tx.apply(table: "todos", pk: "d", op: .update, columns: ["lastUpdate": -1])
      try tx.apply(table: "todos", pk: "f", op: .remove)
    }
    try store.collection("todos").findByID("c").remove()  // outside the window: no event
    try set(store, "a", ["title": "y"])
    let expected = [
      "initial [a,b,c]",
      "[a,c,d] del[1] ins[2] upd[] mov[] | removed b<a, added d<c",
      "[a,d,e] del[1] ins[2] upd[] mov[] | removed c<a, added e<d",
      "[f,a,d] del[2] ins[0] upd[] mov[] | removed e<d, added f<-",
      "[f,a,d] del[] ins[] upd[1] mov[] | changed a<f",
      "[d,a,e] del[0] ins[2] upd[0] mov[2>0] | removed f<-, added e<a, moved d<-, changed d<-",
      "[d,a,e] del[] ins[] upd[1] mov[] | changed a<d",
    ]
    recorder.wait(for: expected.count)
    // An event too many would come before the fence's.
    #expect(try fence.pass())
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
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    try store.collection("todos").findByID("e").remove()
    try set(store, "a", ["lastUpdate": 0])  // outside the window
    try set(store, "b", ["lastUpdate": 9])
    try set(store, "d", ["title": "x"])
    try set(store, "g", ["lastUpdate": 20])  // inserted last: d drops out
    try store.collection("todos").findByID("c").remove()  // outside the window: no event
    try store.write { tx in  // one transaction, one event
      try tx.apply(table: "todos", pk: "a", op: .update, columns: ["lastUpdate": 30])
      try tx.apply(table: "todos", pk: "g", op: .remove)
    }
    let expected = [
      "initial [d,e]",
      "[c,d] del[1] ins[0] upd[] mov[] | removed e<d, added c<-",
      "[d,b] del[0] ins[1] upd[] mov[] | removed c<-, added b<d",
      "[d,b] del[] ins[] upd[0] mov[] | changed d<-",
      "[b,g] del[0] ins[1] upd[] mov[] | removed d<-, added g<b",
      "[b,a] del[1] ins[1] upd[] mov[] | removed g<b, added a<b",
    ]
    recorder.wait(for: expected.count)
    // An event too many would come before the fence's.
    #expect(try fence.pass())
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
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
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
    // An event too many would come before the fence's.
    #expect(try fence.pass())
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
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    signals.wait(for: 1)[0]()
    try set(store, "a", ["lastUpdate": 100])  // delivered at once: [b,c]
    recorder.wait(for: 2)
    try set(store, "b", ["lastUpdate": 100])  // waits: [c,d]
    try set(store, "c", ["lastUpdate": 100])  // waits: [d,e]
    // Until signalled, no third event: one would come before the fence.
    #expect(try fence.pass())
    #expect(recorder.all.count == 2)
    signals.all[1]()
    let events = recorder.wait(for: 3)
    try #require(events.count == 3)
    // One update from what was delivered ([b,c]) to the latest ([d,e]).
    #expect(
      Self.describe(events[2])
        == "[d,e] del[0, 1] ins[0, 1] upd[] mov[] | removed b<-, removed c<b, added d<-, added e<d")
  }

  @Test func everyVariantDeliversOnItsQueue() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let queue = DispatchQueue(label: "test.query.delivery")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 7)
    let todos = store.collection("todos")
    let query = try todos.query().orderBy(child: "lastUpdate").limitToFirst(2)
    let plain = EventRecorder<(Int?, [String])>()
    let signalled = EventRecorder<(Int?, [String])>()
    let single = EventRecorder<(Int?, JSONValue?)>()
    let lives = [
      try query.observeLocal(deliverOn: queue) { documents, _ in
        plain.append((DispatchQueue.getSpecific(key: key), documents.map(\.pk)))
      },
      try query.observeLocalWithNextSignal(deliverOn: queue) { documents, _, signalNext in
        signalled.append((DispatchQueue.getSpecific(key: key), documents.map(\.pk)))
        signalNext()
      },
      try todos.findByID("a").observeLocalWithNextSignal(deliverOn: queue) { document, _, signalNext in
        single.append((DispatchQueue.getSpecific(key: key), document?["lastUpdate"]))
        signalNext()
      },
    ]
    defer { for live in lives { live.stop() } }
    for recorder in [plain, signalled] { recorder.wait(for: 1) }
    single.wait(for: 1)
    try set(store, "a", ["lastUpdate": 9])
    for recorder in [plain, signalled] {
      let events = recorder.wait(for: 2)
      #expect(events.map(\.0) == [7, 7])
      #expect(events.map(\.1) == [["a", "b"], ["b", "c"]])
    }
    let events = single.wait(for: 2)
    #expect(events.map(\.0) == [7, 7])
    #expect(events.map(\.1) == [1, 9])
  }

  @Test func changesStreamsQueryResultsUntilTheLoopEnds() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let stream = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToLast(1).changes()
    var writer: Task<Void, any Error>?
    var seen: [String] = []
    for try await (documents, event) in stream {
      #expect(event.isInitial == seen.isEmpty)
      if case .update(let update) = event {
        #expect(update.childEvents.map(\.kind) == [.removed, .added])
      }
      seen += documents.map(\.pk)
      if writer == nil {
        // The initial event is here, so the live query runs: now the write.
        writer = Task.detached {
          try await store.apply(table: "todos", pk: "f", op: .insert, columns: ["lastUpdate": 6])
        }
      }
      if seen.count == 2 { break }
    }
    try await writer?.value
    #expect(seen == ["e", "f"])
    try await waitUntil { store.observation.isEmpty }
  }
}
