import Folio
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore
@testable import FolioQuery

/// The races at the edges of a live query: a transaction from another
/// process that begins while the watcher reads, and `stop()` called where
/// waiting for a running handler would deadlock. A deadlock fails these
/// tests after a while (`stateTimeout`) instead of hanging them.
struct LiveQueryRaceTests {
  /// The `n` of each document, in order.
  static func values(_ documents: [Document]) -> [Int] { documents.map { $0["n"]?.intValue ?? -1 } }

  @Test func transactionBegunAfterTheJournalCheckArrivesAsOneEvent() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { tx in
      for pk in ["a", "b"] { try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["n": 0]) }
    }
    // Another process: its commits reach `store` only through the watcher.
    let other = try Store(at: scratch.url)
    let recorder = EventRecorder<[Int]>()
    let live = try store.collection("todos").query().observeLocal { documents, _ in
      recorder.append(Self.values(documents))
    }
    defer { live.stop() }
    #expect(recorder.wait(for: 1) == [[0, 0]])
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }

    let todos = try store.table(named: "todos")
    let pathA = try store.documentPath(table: todos, pk: "a")
    let pathB = try store.documentPath(table: todos, pk: "b")
    let newA = Array(#"{"id":"a","n":2}"#.utf8)
    let newB = Array(#"{"id":"b","n":2}"#.utf8)
    let halfway = EventRecorder<Int>()
    let readHalfway = EventRecorder<Int>()
    store.observation.afterJournalCheck.withLock { hook in
      hook = { @Sendable in
        // Only for the first transaction below, once it is in place: not
        // for anything else the watcher may hear first.
        guard let bytes = try? FileSystem.read(pathA), (try? JSONValue(parsing: bytes))?["n"] == 1 else {
          return
        }
        store.observation.afterJournalCheck.withLock { $0 = nil }
        // The second transaction begins as `Store.commit` does it, once the
        // first has let go of the lock (the watcher may read as soon as the
        // first is stamped applied, before it empties the journal), and is
        // caught halfway: its journal is written, one of its two documents
        // replaced.
        try? other.lock.withLock {
          let journal = Journal(
            logPath: other.opLogPath, logOffset: (try? OpLog.size(of: other.opLogPath)) ?? 0, logBytes: [],
            writes: [
              Journal.Write(path: pathA, oldHash: nil, new: newA),
              Journal.Write(path: pathB, oldHash: nil, new: newB),
            ])
          _ = try? journal.write(to: other.journalPath, root: other.rootPath)
          try? FileSystem.writeAtomically(pathA, newA, sync: false)
        }
        // The reads that follow, in this refresh, see it halfway.
        store.observation.afterReads.withLock {
          $0 = { @Sendable in
            store.observation.afterReads.withLock { $0 = nil }
            readHalfway.append(1)
          }
        }
        halfway.append(1)
      }
    }
    // The first transaction, which the watcher is about to read when the
    // second begins.
    try other.write { tx in
      for pk in ["a", "b"] { try tx.apply(table: "todos", pk: pk, op: .update, columns: ["n": 1]) }
    }
    try #require(halfway.wait(for: 1).count == 1)
    try #require(readHalfway.wait(for: 1).count == 1)
    try FileSystem.writeAtomically(pathB, newB, sync: false)
    try Journal.clear(at: other.journalPath)

    let events = recorder.wait { $0.last == [2, 2] }
    // A late state would come before the fence's.
    #expect(try fence.pass())
    #expect(events.last == [2, 2])
    // Every state delivered is the end of a transaction, never the middle.
    #expect(recorder.all.allSatisfy { $0[0] == $0[1] }, "delivered: \(recorder.all)")
  }

  @Test func stopInsideWriteDoesNotWaitForAHandlerWaitingForTheLock() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let calls = EventRecorder<Int>()
    let inHandler = DispatchSemaphore(value: 0)
    let writerHoldsLock = DispatchSemaphore(value: 0)
    let handlerQueue = DispatchQueue(label: "test.handler")
    let live = try store.collection("todos").findByID("a").observeLocal(deliverOn: handlerQueue) { _, event in
      calls.append(1)
      guard !event.isInitial else { return }
      inHandler.signal()
      writerHoldsLock.wait()
      // The handler writes, so it waits for the lock the writer below holds.
      _ = try? store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": 100])
    }
    calls.wait(for: 1)
    let fence = try LiveQueryFence(store: store, queue: handlerQueue)
    try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": 1])
    let callsAtStop = Shared(-1)
    let done = DispatchSemaphore(value: 0)
    Thread {
      try? store.write { tx in
        inHandler.wait()
        writerHoldsLock.signal()
        // The handler goes on to wait for the lock held here, whether or
        // not it has got there yet: a stop() that waited for it would
        // deadlock either way.
        live.stop()
        callsAtStop.update { $0 = calls.all.count }
        try tx.apply(table: "todos", pk: "a", op: .upsert, columns: ["n": 2])
      }
      done.signal()
    }.start()
    try #require(done.wait(timeout: .now() + stateTimeout) == .success, "stop() inside write deadlocked")
    // The handler's own write lands after the stop: no event for it.
    #expect(
      try eventually { try store.collection("todos").findByID("a").exec()?["n"] == 100 },
      "the handler's write never landed")
    // An event for it would come before the fence's.
    #expect(try fence.pass())
    fence.stop()
    #expect(callsAtStop.value == 2)
    #expect(calls.all.count == 2)
    #expect(store.observation.isEmpty)
  }

  @Test func handlersThatStopEachOtherDoNotDeadlock() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    let handles = Shared<[String: LiveQuery]>([:])
    let arrived = ["a": DispatchSemaphore(value: 0), "b": DispatchSemaphore(value: 0)]
    let finished = EventRecorder<String>()
    let calls = EventRecorder<String>()
    let queues = ["a": DispatchQueue(label: "test.a"), "b": DispatchQueue(label: "test.b")]
    for (pk, peer) in [("a", "b"), ("b", "a")] {
      let live = try todos.findByID(pk).observeLocal(deliverOn: queues[pk]!) {
        _, event in
        calls.append(pk)
        guard !event.isInitial else { return }
        // Both handlers run at once, then each stops the other.
        arrived[pk]!.signal()
        _ = arrived[peer]!.wait(timeout: .now() + stateTimeout)
        handles.value[peer]!.stop()
        finished.append(pk)
      }
      handles.update { $0[pk] = live }
    }
    calls.wait(for: 2)
    // One fence on each handler's queue.
    let fences = try ["a", "b"].map {
      try LiveQueryFence(store: store, pk: "fence-" + $0, queue: queues[$0]!)
    }
    try store.write { tx in
      for pk in ["a", "b"] { try tx.apply(table: "todos", pk: pk, op: .upsert, columns: ["n": 1]) }
    }
    #expect(Set(finished.wait(for: 2)) == ["a", "b"], "handlers stopping each other deadlocked")
    // Neither is called again.
    try store.write { tx in
      for pk in ["a", "b"] { try tx.apply(table: "todos", pk: pk, op: .upsert, columns: ["n": 2]) }
    }
    // An event for it would come before the fences'.
    for fence in fences {
      #expect(try fence.pass())
      fence.stop()
    }
    #expect(calls.all.count == 4)
    #expect(store.observation.isEmpty)
  }
}

/// When the watcher drops what it read: only for a transaction that may
/// show in part in it.
struct WatcherOverlapTests {
  typealias Drained = ObservationWatcher.Drained

  @Test func aTransactionOverlapsOnlyIfItWroteADocumentThatWasRead() {
    let read: [String: Set<ExactKey>?] = ["todos": ["a", "b"]]
    #expect(!Drained().touches(read))
    // Began after the check, wrote other documents: the reads hold none of it.
    #expect(!Drained(segments: [[:], ["todos": ["c"]], ["notes": ["a"]]]).touches(read))
    // Wrote one that was read.
    #expect(Drained(segments: [[:], ["todos": ["c"]], ["todos": ["b"]]]).touches(read))
    // A whole table changed, or a query read a whole table.
    #expect(Drained(segments: [[:], ["todos": nil]]).touches(read))
    #expect(Drained(segments: [[:], ["todos": ["z"]]]).touches(["todos": nil]))
    // The end of a transaction that finished just before the check: the
    // reads may hold its other documents, whatever it wrote last.
    #expect(Drained(segments: [["todos": ["z"]]]).touches(read))
    // The queue overflowed: anything may have happened.
    #expect(Drained(segments: [[:]], overflowed: true).touches(read))
  }
}
