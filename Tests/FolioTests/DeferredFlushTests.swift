import Folio
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore

/// Transactions whose files are flushed later (`folio serve`'s group
/// commit): each is durable through its journal record alone, a crash that
/// loses the unflushed files is repaired from the records in order, and
/// every other writer finishes them first.
@Suite struct DeferredFlushTests {
  func records(_ store: Store) throws -> Int {
    guard let bytes = try FileSystem.read(store.journalPath) else { return 0 }
    return Journal.decodeAll(bytes, root: store.rootPath).records.count
  }

  /// Three deferred transactions, four ops: `a` counted up twice, `c<round>`
  /// created, and `b` removed (round 0) or `e` set to the round.
  func deferredWrites(_ store: Store, round: Int = 0) throws {
    try store.writeDeferringFlush { tx in
      _ = try tx.apply(table: "notes", pk: "a", op: .update, transforms: ["n": .increment(1)])
      _ = try tx.apply(table: "notes", pk: "c\(round)", op: .insert, columns: ["n": 7])
    }
    try store.writeDeferringFlush { tx in
      _ = try tx.apply(table: "notes", pk: "a", op: .update, transforms: ["n": .increment(10)])
    }
    try store.writeDeferringFlush { tx in
      if round == 0 {
        try tx.remove(table: "notes", pk: "b")
      } else {
        _ = try tx.apply(table: "notes", pk: "e", op: .upsert, columns: ["n": .integer(round)])
      }
    }
  }

  @Test func aCrashThatLosesTheUnflushedFilesIsRepairedFromTheRecords() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let a = try store.file("notes", "a")
    let b = try store.file("notes", "b")
    let before = (
      a: try #require(scratch.read(a)), b: try #require(scratch.read(b)),
      log: try #require(try FileSystem.read(store.opLogPath))
    )
    try deferredWrites(store)
    #expect(try records(store) == 3)
    let after = try #require(try FileSystem.read(store.opLogPath))
    let afterA = try #require(scratch.read(a))
    // The machine went down before any of it reached the disk: the files
    // and the log are as they were, and a record being written was torn.
    try scratch.write(a, before.a)
    try scratch.write(b, before.b)
    try FileManager.default.removeItem(at: scratch.url.appending(path: try store.file("notes", "c0")))
    try FileSystem.writeAtomically(store.opLogPath, before.log, sync: false)
    let journal = try #require(try FileSystem.read(store.journalPath))
    try FileSystem.writeAtomically(
      store.journalPath, journal + Array("{\"version\":1,\"lo".utf8), sync: false)

    let reopened = try Store(at: scratch.url)
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(try FileSystem.read(store.opLogPath) == after)
    #expect(scratch.read(a) == afterA)
    #expect(try reopened.collection("notes").findByID("a").exec()?["n"] == 12)
    #expect(try reopened.collection("notes").findByID("c0").exec()?["n"] == 7)
    #expect(try reopened.collection("notes").findByID("b").exec() == nil)
  }

  @Test func aRecordIsRedoneOnTheFileItFindsHalfway() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let a = try store.file("notes", "a")
    try store.writeDeferringFlush { tx in
      _ = try tx.apply(table: "notes", pk: "a", op: .update, transforms: ["n": .increment(1)])
    }
    let middle = try #require(scratch.read(a))
    try deferredWrites(store)
    // Only the first transaction's file reached the disk.
    try scratch.write(a, middle)
    _ = try Store(at: scratch.url)
    #expect(try store.collection("notes").findByID("a").exec()?["n"] == 13)
    // An edit saved after the crash is left alone by the redo.
    try deferredWrites(store, round: 1)
    try scratch.write(a, "{\n  \"id\": \"a\",\n  \"n\": 99\n}\n")
    _ = try Store(at: scratch.url)
    #expect(try store.collection("notes").findByID("a").exec()?["n"] == 99)
  }

  @Test func aCheckpointOrAnyOtherWriteFlushesAndEmptiesTheJournal() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    try deferredWrites(store)
    // The files the renames swapped out are kept as spares, not in the
    // table (SpareFilesTests).
    #expect(try FileSystem.list(store.spares.folderPath)?.count == 2)
    let notes = try store.table(named: "notes")
    #expect(
      try notes.listDocumentNames(in: scratch.url.appending(path: "notes").path)?.sorted()
        == (try ["a", "c0"].map { try notes.documentName(for: $0) }.sorted()))
    try store.checkpointDeferredWrites()
    #expect(!Journal.isPending(at: store.journalPath))
    try deferredWrites(store, round: 1)
    #expect(try records(store) == 3)
    try store.apply(table: "notes", pk: "d", op: .insert)
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(try store.collection("notes").findByID("a").exec()?["n"] == 23)
    // 2 seeds, 4 per round of deferred writes, and `d`.
    #expect(try store.ops().count == 11)
    #expect(try store.ops().map(\.hlc) == store.ops().map(\.hlc).sorted())
  }

  @Test func anotherStoreThatRedoesTheJournalLeavesNothingBehind() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    try deferredWrites(store)
    // Another process opens the store: it redoes and empties the journal,
    // then writes its own transaction.
    let other = try Store(at: scratch.url)
    #expect(!Journal.isPending(at: store.journalPath))
    try other.apply(table: "notes", pk: "a", op: .update, transforms: ["n": .increment(100)])
    // This process's next deferred write starts a journal of its own.
    try store.writeDeferringFlush { tx in
      _ = try tx.apply(table: "notes", pk: "a", op: .update, transforms: ["n": .increment(1000)])
    }
    #expect(try records(store) == 1)
    try store.checkpointDeferredWrites()
    #expect(try store.collection("notes").findByID("a").exec()?["n"] == 1112)
    #expect(try store.ops().count == 8)
    #expect(try store.check().isEmpty)
  }

  @Test func pastItsLimitTheJournalIsCheckpointedInTheBackground() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let limit = StoreWriter.deferredFlushLimit.records
    let count = 4 * limit + 5
    // While the background checkpoint is held up, records pile up to four
    // times the limit, and the write that reaches that flushes them itself.
    try store.checkpointSerial.withLock { _ in
      for i in 0..<count {
        try store.writeDeferringFlush { tx in
          _ = try tx.apply(
            table: "notes", pk: "a", op: .update, transforms: ["n": .increment(DecimalInteger(i))])
        }
      }
      #expect(try records(store) == 5)
    }
    // Released, the checkpoint queued at the limit drops the rest.
    // (It empties the journal, then forgets the records, both under the
    // store lock: wait for both.)
    try eventually { try records(store) == 0 && store.deferredFlush.withLock({ $0 }) == nil }
    #expect(try records(store) == 0)
    #expect(store.deferredFlush.withLock { $0 } == nil)
    #expect(
      try store.collection("notes").findByID("a").exec()?["n"] == .integer(1 + (0..<count).reduce(0, +)))
  }

  /// A checkpoint's flush runs without the store lock: the records written
  /// meanwhile are kept, alone, and a crash that loses their files is
  /// still repaired from them.
  @Test func recordsWrittenDuringACheckpointStayInTheJournal() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let a = try store.file("notes", "a")
    try deferredWrites(store)
    let flushed = try #require(store.deferredFlush.withLock { $0 })
    try FileSystem.syncFileSystem(containing: store.rootPath)
    let before = (
      a: try #require(scratch.read(a)), log: try #require(try FileSystem.read(store.opLogPath))
    )
    try deferredWrites(store, round: 1)
    let after = (
      a: try #require(scratch.read(a)), log: try #require(try FileSystem.read(store.opLogPath))
    )
    try store.lock.withLock { try store.writer.dropRecords(flushedBy: flushed) }
    #expect(try records(store) == 3)
    #expect(store.deferredFlush.withLock { $0?.records } == 3)
    // The machine went down: round 1's files never reached the disk.
    try scratch.write(a, before.a)
    try FileManager.default.removeItem(at: scratch.url.appending(path: try store.file("notes", "c1")))
    try FileManager.default.removeItem(at: scratch.url.appending(path: try store.file("notes", "e")))
    try FileSystem.writeAtomically(store.opLogPath, before.log, sync: false)
    let reopened = try Store(at: scratch.url)
    #expect(scratch.read(a) == after.a)
    #expect(try FileSystem.read(store.opLogPath) == after.log)
    #expect(try reopened.collection("notes").findByID("a").exec()?["n"] == 23)
    #expect(try reopened.collection("notes").findByID("c1").exec()?["n"] == 7)
    #expect(try reopened.collection("notes").findByID("e").exec()?["n"] == 1)
    #expect(try reopened.check().isEmpty)
  }

  /// A crash after a swap, before the new file's blocks reached the disk,
  /// leaves it empty or all zero bytes: no one's save, so the redo writes
  /// it again (where a real edit after the crash is left alone, above).
  @Test(arguments: [0, 26])
  func aFileTheCrashLeftEmptyOrZeroedIsWrittenAgain(_ zeros: Int) throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let a = try store.file("notes", "a")
    try deferredWrites(store)
    let afterA = try #require(scratch.read(a))
    let path = scratch.url.appending(path: a).path
    #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0, count: zeros)))
    _ = try Store(at: scratch.url)
    #expect(scratch.read(a) == afterA)
    #expect(try store.collection("notes").findByID("a").exec()?["n"] == 12)
  }
}
