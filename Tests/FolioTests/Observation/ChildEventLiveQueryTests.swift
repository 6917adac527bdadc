import Dispatch
import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// `query.observeLocal(.childAdded) { document, prevKey in … }` and its
/// three siblings (seed `004_*`): golden sequences, written out by hand.
struct ChildEventLiveQueryTests {
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

  /// "key<prevKey", "-" for none.
  typealias Recorded = (key: String, prevKey: String?, document: Document)
  static func describe(_ r: Recorded) -> String { "\(r.key)<\(r.prevKey ?? "-")" }

  @Test func eachKindOfALimitToFirstWindow() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let query = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToFirst(3)
    let kinds: [ChildEvent.Kind] = [.childAdded, .childRemoved, .childMoved, .childChanged]
    var recorders: [ChildEvent.Kind: EventRecorder<Recorded>] = [:]
    var live: [LiveQuery] = []
    for kind in kinds {
      let recorder = EventRecorder<Recorded>()
      recorders[kind] = recorder
      live.append(try query.observeLocal(kind) { recorder.append(($0.pk, $1, $0)) })
    }
    defer { for query in live { query.stop() } }
    // The initial results come as child-added events, in order.
    recorders[.added]!.wait(for: 3)
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    try store.collection("todos").findByID("b").remove()  // a member goes: d slides in
    try set(store, "e", ["lastUpdate": 10])  // outside the window: no event
    try set(store, "c", ["lastUpdate": 20])  // moves out: e comes in
    try set(store, "f", ["lastUpdate": 0])  // comes in first: e drops out
    try set(store, "a", ["title": "x"])  // changes in place
    try store.write { tx in  // one transaction: d moves to the front and changes; f goes
      try tx.apply(table: "todos", pk: "d", op: .update, columns: ["lastUpdate": -1])
      try tx.apply(table: "todos", pk: "f", op: .remove)
    }
    try store.collection("todos").findByID("c").remove()  // outside the window: no event
    try set(store, "a", ["title": "y"])
    let expected: [ChildEvent.Kind: [String]] = [
      .added: ["a<-", "b<a", "c<b", "d<c", "e<d", "f<-", "e<a"],
      .removed: ["b<a", "c<a", "e<d", "f<-"],
      .moved: ["d<-"],
      .changed: ["a<f", "d<-", "a<d"],
    ]
    for kind in kinds { recorders[kind]!.wait(for: expected[kind]!.count) }
    // An event too many would come before the fence's.
    #expect(try fence.pass())
    for kind in kinds {
      #expect(recorders[kind]!.all.map(Self.describe) == expected[kind]!, "\(kind)")
    }
    // A removed child carries its last content; a changed one its new one.
    let removed = recorders[.removed]!.all
    #expect(removed.count == 4 && removed[1].document["lastUpdate"] == 3)
    let changed = recorders[.changed]!.all
    #expect(changed.count == 3 && changed[0].document["title"] == "x" && changed[2].document["title"] == "y")
    #expect(changed.count == 3 && changed[1].document["lastUpdate"] == -1)
  }

  @Test func limitToLastOnAQueueAndAfterStop() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try seed(store)
    let queue = DispatchQueue(label: "test.child-events")
    let key = DispatchSpecificKey<Bool>()
    queue.setSpecific(key: key, value: true)
    let query = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToLast(2)
    let added = EventRecorder<Recorded>()
    let removed = EventRecorder<Recorded>()
    let onQueue = Shared(true)
    let liveAdded = try query.observeLocal(.childAdded, deliverOn: queue) { document, prevKey in
      if DispatchQueue.getSpecific(key: key) != true { onQueue.update { $0 = false } }
      added.append((document.pk, prevKey, document))
    }
    let liveRemoved = try query.observeLocal(.childRemoved, deliverOn: queue) { document, prevKey in
      removed.append((document.pk, prevKey, document))
    }
    added.wait(for: 2)
    let fence = try LiveQueryFence(store: store, queue: queue)
    try set(store, "f", ["lastUpdate": 6])  // comes in last: d drops out
    try set(store, "a", ["lastUpdate": 0])  // outside the window: nothing
    try store.collection("todos").findByID("f").remove()  // d slides back in
    added.wait(for: 4)
    removed.wait(for: 2)
    liveAdded.stop()
    liveRemoved.stop()
    try set(store, "g", ["lastUpdate": 7])  // after stop: nothing
    // An event for it would come before the fence's.
    #expect(try fence.pass())
    fence.stop()
    #expect(added.all.map(Self.describe) == ["d<-", "e<d", "f<e", "d<-"])
    #expect(removed.all.map(Self.describe) == ["d<-", "f<e"])
    #expect(onQueue.value)
    #expect(store.observation.isEmpty)
  }
}
