import Folio
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioCore

/// Deferred writes put documents in place through spare files: the file a
/// swap replaces is zeroed a checkpoint later and written again, so a
/// stream of writes neither allocates nor frees an inode per document;
/// nobody who has the old file open sees it change, and a crash leaves
/// nothing but what a new file would.
@Suite struct SpareFilesTests {
  func inode(_ path: String) -> UInt64 {
    var st = stat()
    return stat(path, &st) == 0 ? UInt64(st.st_ino) : 0
  }

  func increment(_ store: Store, _ pk: String, by amount: Int = 1) throws {
    try store.writeDeferringFlush { tx in
      _ = try tx.apply(
        table: "notes", pk: pk, op: .update, transforms: ["n": .increment(DecimalInteger(amount))])
    }
  }

  /// A checkpoint, with the zeroing it queued done.
  func checkpoint(_ store: Store) throws {
    try store.checkpointDeferredWrites()
    store.spares.waitUntilIdle()
  }

  @Test func deferredWritesCycleTheSameFiles() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let notes = try store.table(named: "notes")
    let documents = try ["a", "b"].map { try notes.documentName(for: $0) }.sorted()
    var seen: Set<UInt64> = []
    for round in 0..<12 {
      try increment(store, "a")
      try increment(store, "b")
      for pk in ["a", "b"] { seen.insert(inode(scratch.path + "/" + (try store.file("notes", pk)))) }
      try checkpoint(store)
      // Only the documents in the table's folder: no temp files.
      #expect(
        try notes.listDocumentNames(in: scratch.path + "/notes")?.sorted() == documents, "round \(round)")
    }
    #expect(try store.collection("notes").findByID("a").exec()?["n"] == 13)
    #expect(try store.collection("notes").findByID("b").exec()?["n"] == 14)
    // The first writes make files and keep the ones they swap out; from the
    // third checkpoint on, writes go into those. A spare that someone still
    // has open when its turn to be zeroed comes is unlinked instead, by
    // design, and a new file takes its place: on a loaded machine a reader
    // of the old document may still hold one. Rarely, and never most.
    let unlinked = store.spares.statistics.unlinked
    #expect(unlinked <= 2, "spares unlinked: \(unlinked)")
    #expect(store.spares.statistics.reused >= 16 - 2 * unlinked)
    // So the 24 writes put 8 files at most in place (two rounds of new
    // files, and then the spares they make), not 24, and one more for each
    // spare unlinked.
    #expect(seen.count <= 8 + unlinked, "inodes: \(seen.count), spares unlinked: \(unlinked)")
    let spares = try #require(try FileSystem.list(store.spares.folderPath))
    #expect(spares.count <= 8)
    // Every spare waiting to be written holds zeros or an old document.
    for name in spares {
      let bytes = try #require(try FileSystem.read(store.spares.folderPath + "/" + name))
      #expect(bytes.allSatisfy { $0 == 0 } || (try? JSONValue(parsing: bytes)) != nil)
    }
    #expect(try store.check().isEmpty)
  }

  @Test func aReaderOfTheReplacedFileReadsItWhole() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let original = try #require(scratch.read(try store.file("notes", "a")))
    let reader = open(scratch.path + "/" + (try store.file("notes", "a")), O_RDONLY | O_CLOEXEC)
    #expect(reader >= 0)
    defer { close(reader) }
    try increment(store, "a")
    try increment(store, "b")
    try checkpoint(store)
    // A checkpoint after more writes: the files swapped out before the
    // last one are due for zeroing.
    try increment(store, "b")
    try checkpoint(store)
    // The open one was unlinked instead; the other was zeroed. On a loaded
    // machine the other may be unlinked too, by design: a process another
    // test is starting can hold a copy of a descriptor of it for an
    // instant, and the kernel then refuses the lease.
    let unlinked = store.spares.statistics.unlinked
    #expect(unlinked == 1 || unlinked == 2, "spares unlinked: \(unlinked)")
    let bytes = try FileSystem.readAll(reader, path: "a.json")
    #expect(String(decoding: bytes, as: UTF8.self) == original)
    // `b`'s first old file, zeroed (unless unlinked), and its second, not
    // yet due.
    #expect(try FileSystem.list(store.spares.folderPath)?.count == 3 - unlinked)
  }

  /// A file with another name (a hard link a deduplicating tool made) is
  /// never zeroed, and a file someone made longer after it was swapped out
  /// is zeroed whole.
  @Test func onlyAWholeUnlinkedFileIsZeroed() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let original = try #require(scratch.read(try store.file("notes", "a")))
    #expect(link(scratch.path + "/" + (try store.file("notes", "a")), scratch.path + "/backup.json") == 0)
    try increment(store, "a")
    try increment(store, "b")
    try checkpoint(store)
    // `b`'s old file, swapped out: a writer that had it open appends.
    let folder = store.spares.folderPath
    let grown = try #require(
      try FileSystem.list(folder)?.first { name in
        (try? FileSystem.read(folder + "/" + name)).map { String(decoding: $0, as: UTF8.self) } != original
      })
    let fd = open(folder + "/" + grown, O_WRONLY | O_APPEND | O_CLOEXEC)
    try FileSystem.writeAll(fd, Array(repeating: UInt8(ascii: "z"), count: 5000), path: grown)
    close(fd)
    try increment(store, "b")
    try checkpoint(store)
    #expect(scratch.read("backup.json") == original)
    #expect(store.spares.statistics.unlinked == 1)
    let zeroed = try #require(try FileSystem.read(folder + "/" + grown))
    #expect(zeroed.count > 5000 && zeroed.allSatisfy { $0 == 0 })
  }

  /// A crash after a spare was swapped in, before its new content reached
  /// the disk: the document holds the spare's flushed zeros, or the start
  /// of the new content. The redo writes it again.
  @Test func aSpareTheCrashLeftZeroedIsWrittenAgain() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    /// Rounds of writes and checkpoints, until a spare is ready.
    func refill() throws {
      for _ in 0..<3 {
        try increment(store, "b")
        try checkpoint(store)
      }
    }
    let file = try store.file("notes", "a")
    let path = scratch.path + "/" + file
    var expected = 1
    for torn: ([UInt8]) -> [UInt8] in [
      { _ in [UInt8](repeating: 0, count: 40) }, { $0 + [UInt8](repeating: 0, count: 30) },
      { Array($0.dropLast(4)) },
    ] {
      try refill()
      let reused = store.spares.statistics.reused
      try increment(store, "a", by: 100)
      expected += 100
      #expect(store.spares.statistics.reused == reused + 1)
      let after = try #require(scratch.read(file))
      // Written in place, as the disk would hold it: the same inode.
      let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
      try FileSystem.writeAll(fd, torn(Array(after.utf8)), path: path)
      close(fd)
      _ = try Store(at: scratch.url)
      #expect(scratch.read(file) == after)
      #expect(try store.collection("notes").findByID("a").exec()?["n"] == .integer(expected))
    }
  }

  @Test func theFoldersOfGoneProcessesAreRemoved() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let parent = store.spares.parentPath
    try FileSystem.makeDirectories(parent + "/1-gone")
    try FileSystem.makeDirectories(parent + "/2-alive")
    try scratch.write(".git/folio/spares/1-gone/s1", "{}")
    try scratch.write(".git/folio/trash/0af.notes.json", "{}")
    // A live process holds its folder's lock.
    let alive = open(parent + "/2-alive", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { close(alive) }
    #expect(flock(alive, LOCK_EX) == 0)
    try increment(store, "a")
    store.spares.waitUntilIdle()
    let own = String(store.spares.folderPath.dropFirst(parent.count + 1))
    #expect(try FileSystem.list(parent)?.sorted() == ["2-alive", own].sorted())
    #expect(!scratch.exists(".git/folio/trash"))
  }

  @Test func theRedoTellsATornWriteFromASave() {
    let new = Array(#"{"id":"a","n":2}"#.utf8)
    #expect(StoreWriter.isTornWrite([], of: new))
    #expect(StoreWriter.isTornWrite([0, 0, 0], of: nil))
    // The size written before the content, or the content before the size.
    #expect(StoreWriter.isTornWrite(new + [0, 0], of: new))
    #expect(StoreWriter.isTornWrite(Array(new.prefix(5)), of: new))
    #expect(!StoreWriter.isTornWrite(Array(#"{"id":"a","n":3}"#.utf8), of: new))
    #expect(!StoreWriter.isTornWrite(Array(#"{"id":"a"}"#.utf8) + [0], of: new))
    #expect(!StoreWriter.isTornWrite([1, 0], of: nil))
    // A document of three sectors, its sectors reaching the disk in any
    // order: each is zeros or the new content's.
    let long = Array(repeating: UInt8(ascii: "x"), count: 1400)
    let zeros = [UInt8](repeating: 0, count: 512)
    #expect(StoreWriter.isTornWrite(zeros + long[512..<1024] + zeros.prefix(376), of: long))
    #expect(StoreWriter.isTornWrite(Array(long[..<512]) + zeros + long[1024...], of: long))
    var edited = long
    edited[700] = UInt8(ascii: "y")
    #expect(!StoreWriter.isTornWrite(zeros + edited[512...], of: long))
  }
}
