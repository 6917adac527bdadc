import Folio
import FolioQuery
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore

/// How a live query sees another process's transactions: whole, as soon as
/// the writer stamps them applied (before its journal is emptied), and
/// never half done when the writer dies midway.
struct CrossProcessLiveQueryTests {
  /// A transaction of `other` caught as `Store.commit` makes it: journal
  /// written, then the documents replaced one by one, `pause` apart.
  /// - Returns: the journal's checksum line, for the applied stamp.
  static func beginTransaction(
    _ other: Store, setting n: Int, of pks: [String], writing count: Int, pause: Double = 0
  ) throws -> [UInt8] {
    let todos = try other.table(named: "todos")
    var writes: [Journal.Write] = []
    for pk in pks {
      let path = try other.documentPath(table: todos, pk: pk)
      let old = try FileSystem.read(path).map { FNV.hex($0) }
      writes.append(Journal.Write(path: path, oldHash: old, new: Array(#"{"id":"\#(pk)","n":\#(n)}"#.utf8)))
    }
    let journal = Journal(
      logPath: other.opLogPath, logOffset: try OpLog.size(of: other.opLogPath), logBytes: [], writes: writes)
    let trailer = try journal.write(to: other.journalPath, root: other.rootPath)
    for write in writes.prefix(count) {
      FolioTestSupport.pause(seconds: pause)
      try FileSystem.writeAtomically(write.path, write.new!, sync: false)
    }
    return trailer
  }

  static func observe(_ store: Store, into recorder: EventRecorder<[Int]>) throws -> LiveQuery {
    try store.collection("todos").query().observeLocal { documents, _ in
      recorder.append(LiveQueryRaceTests.values(documents))
    }
  }

  static let pks = ["a", "b", "c", "d"]

  @Test func anotherProcessesTransactionArrivesWholeOnceStampedApplied() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { tx in
      for pk in Self.pks { try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["n": 0]) }
    }
    let other = try Store(at: scratch.url)
    let recorder = EventRecorder<[Int]>()
    let live = try Self.observe(store, into: recorder)
    defer { live.stop() }
    #expect(recorder.wait(for: 1) == [[0, 0, 0, 0]])
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }

    // A real transaction of several documents from the other store.
    try other.write { tx in
      for pk in Self.pks { try tx.apply(table: "todos", pk: pk, op: .update, columns: ["n": 1]) }
    }
    #expect(recorder.wait { $0.last == [1, 1, 1, 1] }.last == [1, 1, 1, 1])

    // The same, with the journal never emptied (the writer is slow to
    // truncate it): the stamp alone ends the wait, before the second after
    // which a full journal would be redone. Had the watcher waited for
    // that instead, it would have redone the journal, emptying it.
    let trailer = try Self.beginTransaction(other, setting: 2, of: Self.pks, writing: 4, pause: 0.05)
    Journal.stampApplied(trailer, journal: other.journalPath)
    let events = recorder.wait { $0.last == [2, 2, 2, 2] }
    #expect(events.last == [2, 2, 2, 2])
    #expect(
      Journal.isPending(at: store.journalPath), "the watcher redid the journal instead of reading the stamp")
    // A state in between would come before the fence's: the stamp lets
    // changes through, and the fence is not a document the journal writes.
    #expect(try fence.pass())
    #expect(recorder.all.count == 3, "delivered: \(recorder.all)")
    #expect(recorder.all.allSatisfy { Set($0).count == 1 }, "delivered: \(recorder.all)")
    try Journal.clear(at: other.journalPath)
  }

  @Test func aWriterKilledMidTransactionIsNeverDeliveredHalfDone() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { tx in
      for pk in Self.pks { try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["n": 0]) }
    }
    let other = try Store(at: scratch.url)
    let recorder = EventRecorder<[Int]>()
    let live = try Self.observe(store, into: recorder)
    defer { live.stop() }
    #expect(recorder.wait(for: 1) == [[0, 0, 0, 0]])
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }

    // Killed after two of its four documents: no stamp, the journal full.
    // Nothing is delivered while the journal is there: after a second the
    // watcher finishes the journal, as the next open would, and the
    // transaction arrives whole. A half-done state delivered during that
    // second would be in the list checked after the fence.
    _ = try Self.beginTransaction(other, setting: 1, of: Self.pks, writing: 2)
    let events = recorder.wait { $0.last == [1, 1, 1, 1] }
    #expect(events.last == [1, 1, 1, 1])
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(try fence.pass())
    #expect(recorder.all == [[0, 0, 0, 0], [1, 1, 1, 1]])
  }

  @Test func documentsOutsideATransactionUnderWayAreNotHeldBack() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { tx in
      for pk in Self.pks { try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["n": 0]) }
    }
    let other = try Store(at: scratch.url)
    let recorder = EventRecorder<Document?>()
    let live = try store.collection("todos").findByID("d").observeLocal { document, _ in
      recorder.append(document)
    }
    defer { live.stop() }
    #expect(recorder.wait(for: 1).count == 1)
    // A transaction under way on a, b and c (its journal written, nothing
    // else yet), and an edit of d by something that is not Folio.
    let trailer = try Self.beginTransaction(other, setting: 1, of: ["a", "b", "c"], writing: 0)
    let path = try store.documentPath(table: try store.table(named: "todos"), pk: "d")
    try FileSystem.writeAtomically(path, Array(#"{"id":"d","n":5}"#.utf8), sync: false)
    let events = recorder.wait { $0.count == 2 }
    #expect(events.last??["n"]?.intValue == 5)
    // Not held back until the journal was redone (after a second): it is
    // still there.
    #expect(Journal.isPending(at: store.journalPath), "d's edit waited for the transaction")
    Journal.stampApplied(trailer, journal: other.journalPath)
    try Journal.clear(at: other.journalPath)
  }
}
