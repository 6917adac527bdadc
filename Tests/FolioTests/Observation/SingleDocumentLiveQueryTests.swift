import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// Single-document live queries (seed `000_*` `observeLocal`).
struct SingleDocumentLiveQueryTests {
  typealias Event = (document: Document?, event: SingleDocumentLiveQueryEvent)

  func doc(_ pk: String, _ value: JSONValue) -> Document {
    guard case .object(var object) = value else { fatalError("not an object") }
    object["id"] = .string(pk)
    return Document(pk: pk, table: "todos", value: object)
  }

  @Test func initialEventComesPromptly() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["title": "milk"])
    let recorder = EventRecorder<Event>()
    let live = try todos.findByID("a").observeLocal { recorder.append(($0, $1)) }
    defer { live.stop() }
    let events = recorder.wait(for: 1)
    try #require(events.count == 1)
    #expect(events[0].event == SingleDocumentLiveQueryEvent(isInitial: true, oldDocument: nil))
    #expect(events[0].document == doc("a", ["title": "milk"]))
  }

  @Test func oneEventPerTransactionThatChangesTheDocument() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    let recorder = EventRecorder<Event>()
    let live = try todos.findByID("a").observeLocal { recorder.append(($0, $1)) }
    defer { live.stop() }
    recorder.wait(for: 1)
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "milk"])
    try store.apply(table: "todos", pk: "b", op: .insert, columns: ["title": "other"])  // not observed
    try store.write { tx in
      // Two mutations of the document in one transaction: one event.
      try tx.apply(table: "todos", pk: "a", op: .update, columns: ["title": "eggs"])
      try tx.apply(table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    }
    try store.apply(table: "todos", pk: "a", op: .update, columns: ["title": "eggs"])  // no change
    try todos.findByID("a").remove()
    let events = recorder.wait(for: 4)
    // Nothing more may follow: a fifth event would come before the fence.
    #expect(try fence.pass())
    let milk = doc("a", ["title": "milk"])
    let eggs = doc("a", ["title": "eggs", "views": 2])
    let expected: [Event] = [
      (nil, SingleDocumentLiveQueryEvent(isInitial: true, oldDocument: nil)),
      (milk, SingleDocumentLiveQueryEvent(isInitial: false, oldDocument: nil)),
      (eggs, SingleDocumentLiveQueryEvent(isInitial: false, oldDocument: milk)),
      (nil, SingleDocumentLiveQueryEvent(isInitial: false, oldDocument: eggs)),
    ]
    #expect(recorder.all.count == expected.count)
    for (got, want) in zip(events, expected) {
      #expect(got.document == want.document)
      #expect(got.event == want.event)
    }
  }

  @Test func deliversOnTheGivenQueue() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let queue = DispatchQueue(label: "test.delivery")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 7)
    let recorder = EventRecorder<Int?>()
    let live = try store.collection("todos").findByID("a").observeLocal(deliverOn: queue) { _, _ in
      recorder.append(DispatchQueue.getSpecific(key: key))
    }
    defer { live.stop() }
    try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["title": "x"])
    #expect(recorder.wait(for: 2) == [7, 7])
  }

  @Test func nextSignalCoalescesAndNeverOverlaps() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": 0])
    let recorder = EventRecorder<Event>()
    let signals = EventRecorder<@Sendable () -> Void>()
    let active = Shared(0)
    let overlapped = Shared(false)
    let live = try store.collection("todos").findByID("a").observeLocalWithNextSignal {
      document, event, signalNext in
      if active.update({
        $0 += 1
        return $0
      }) > 1 {
        overlapped.update { $0 = true }
      }
      pause(seconds: 0.005)
      recorder.append((document, event))
      active.update { $0 -= 1 }
      signals.append(signalNext)  // the test signals, as a slow consumer would
    }
    defer { live.stop() }
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    signals.wait(for: 1)[0]()
    // The first update is delivered at once; the other 99 wait and coalesce.
    for n in 1...100 {
      try store.apply(table: "todos", pk: "a", op: .update, columns: ["n": .integer(n)])
    }
    let second = signals.wait(for: 2)
    // Until signalled, no third event: one would come before the fence.
    #expect(try fence.pass())
    #expect(recorder.all.count == 2)
    second[1]()
    let events = recorder.wait(for: 3)
    signals.wait(for: 3)[2]()
    #expect(try fence.pass())
    #expect(recorder.all.count == 3)
    #expect(events.last?.document?["n"] == 100)
    #expect(!overlapped.value)
    // Each event's oldDocument is the document the one before delivered.
    for (previous, next) in zip(events, events.dropFirst()) {
      #expect(next.event.oldDocument == previous.document)
    }
  }

  @Test func handlerNeverOverlapsOnAConcurrentQueue() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let active = Shared(0)
    let overlapped = Shared(false)
    let recorder = EventRecorder<JSONValue?>()
    let queue = DispatchQueue(label: "test.concurrent", attributes: .concurrent)
    let live = try store.collection("todos").findByID("a").observeLocal(deliverOn: queue) { document, _ in
      if active.update({
        $0 += 1
        return $0
      }) > 1 {
        overlapped.update { $0 = true }
      }
      pause(seconds: 0.002)
      active.update { $0 -= 1 }
      recorder.append(document?["n"])
    }
    defer { live.stop() }
    for n in 1...30 { try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": .integer(n)]) }
    let events = recorder.wait(for: 31)
    #expect(!overlapped.value)
    // In order, one per transaction.
    #expect(events == [nil] + (1...30).map { JSONValue.integer($0) })
  }

  @Test func nothingArrivesAfterStopReturns() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let stopped = Shared(false)
    let late = Shared(0)
    let recorder = EventRecorder<Int>()
    let live = try store.collection("todos").findByID("a").observeLocal { _, _ in
      pause(seconds: 0.02)  // still running when stop() is called
      if stopped.value { late.update { $0 += 1 } }
      recorder.append(1)
    }
    recorder.wait(for: 1)
    let fence = try LiveQueryFence(store: store)
    let writer = Thread {
      for n in 0..<50 {
        _ = try? store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": .integer(n)])
      }
    }
    writer.start()
    recorder.wait(for: 3)
    live.stop()
    stopped.update { $0 = true }
    live.stop()  // twice is fine
    let count = recorder.all.count
    #expect(eventually { writer.isFinished })
    try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": -1])
    // A handler call queued before the stop, or an event for a write after
    // it, would run before the fence's.
    #expect(try fence.pass())
    fence.stop()
    #expect(late.value == 0)
    #expect(recorder.all.count == count)
    #expect(store.observation.isEmpty)
  }

  @Test func releasingTheHandleStopsDelivery() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let recorder = EventRecorder<Int>()
    var live: LiveQuery? = try store.collection("todos").findByID("a").observeLocal { _, _ in
      recorder.append(1)
    }
    recorder.wait(for: 1)
    #expect(live?.isStopped == false)
    let fence = try LiveQueryFence(store: store)
    live = nil
    try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": 1])
    // An event for the write would come before the fence's.
    #expect(try fence.pass())
    fence.stop()
    #expect(store.observation.isEmpty)
    #expect(recorder.all.count == 1)
  }

  @Test func endingTheAsyncSequenceStopsTheQuery() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let stream = try store.collection("todos").findByID("a").changes()
    var writer: Task<Void, any Error>?
    var seen: [JSONValue?] = []
    for try await (document, event) in stream {
      #expect(event.isInitial == seen.isEmpty)
      seen.append(document?["n"])
      if writer == nil {
        // The initial event is here, so the live query runs: now the writes.
        writer = Task.detached {
          for n in 1...3 {
            try await store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": .integer(n)])
          }
        }
      }
      if seen.count == 3 { break }
    }
    try await writer?.value
    #expect(seen == [nil, 1, 2])
    // Ending the loop drops the stream, which stops the live query.
    try await waitUntil { store.observation.isEmpty }
  }

  @Test func seesFilesWrittenOutsideFolio() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let recorder = EventRecorder<Event>()
    let live = try store.collection("todos").findByID("a").observeLocal { recorder.append(($0, $1)) }
    defer { live.stop() }
    recorder.wait(for: 1)
    // As git checkout or an editor would: the file itself, no op log entry.
    try scratch.write(try store.file("todos", "a"), #"{"id":"a","title":"by hand"}"#)
    let events = recorder.wait(for: 2)
    try #require(events.count == 2)
    #expect(events[1].document == doc("a", ["title": "by hand"]))
    try FileManager.default.removeItem(atPath: scratch.path + "/" + (try store.file("todos", "a")))
    let after = recorder.wait(for: 3)
    try #require(after.count == 3)
    #expect(after[2].document == nil)
  }
}

/// `changes()` makes start-up failures visible, the same way for both forms.
struct LiveQueryChangesFailureTests {
  @Test func anUnknownTableThrowsAtTheCall() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    #expect { try store.collection("nope").findByID("a").changes() } throws: { error in
      (error as? FolioError)?.code == .unknownTable
    }
    #expect { try store.collection("nope").query().limitToFirst(1).changes() } throws: { error in
      (error as? FolioError)?.code == .unknownTable
    }
  }

  @Test func aStartThatFailsThrowsFromTheFirstNext() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try await store.apply(table: "todos", pk: "b", op: .insert, columns: ["lastUpdate": 1])
    try scratch.write(try store.file("todos", "a"), #"{"id": "a", "#)  // a save caught half way
    let single = try store.collection("todos").findByID("a").changes()
    var iterator = single.makeAsyncIterator()
    await #expect { _ = try await iterator.next() } throws: { error in
      (error as? FolioError)?.code == .invalidJSON
    }
    let after = try await iterator.next()
    #expect(after == nil)
    // A query of the table leaves the broken file out and starts (see
    // LeftOutDocumentTests): one file does not take the table down.
    do {
      let query = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToFirst(2).changes()
      var queryIterator = query.makeAsyncIterator()
      let first = try await queryIterator.next()
      #expect(first?.0.map(\.pk) == ["b"])
    }
  }
}
