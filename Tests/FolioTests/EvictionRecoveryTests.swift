import Folio
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore

/// A crash between an eviction's file delete and the index update: the
/// journal is still pending, and the next open marks the index entry
/// skip-worktree, so git never sees the eviction as a deletion.
@Suite struct EvictionRecoveryTests {
  @Test func recoveryMarksTheIndexOfAnInterruptedEviction() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let store = try fixture.seed(yaml: SyncTests.yaml)
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["views": 1])
    try store.commit()
    let file = try store.file("todos", "a")
    let path = store.rootPath + "/" + file
    let bytes = try #require(try FileSystem.read(path))

    // What `evict` does up to the moment of the crash: the eviction mark,
    // the journal, the file gone; not the index.
    try store.evictions.save(["todos": ["a"]])
    let journal = Journal(
      logPath: store.opLogPath, logOffset: try OpLog.size(of: store.opLogPath), logBytes: [],
      writes: [Journal.Write(path: path, oldHash: FNV.hex(bytes), new: nil)])
    try journal.write(to: store.journalPath, root: store.rootPath)
    _ = try FileSystem.remove(path)
    #expect(try git(["status", "--porcelain"], in: store.rootPath).output.contains(" D " + file))

    let reopened = try Store(at: URL(fileURLWithPath: store.rootPath))
    _ = try reopened.status()  // takes the lock and finishes the journal
    #expect(try git(["status", "--porcelain"], in: store.rootPath).output.isEmpty)
    #expect(try git(["ls-files", "-v", file], in: store.rootPath).output.hasPrefix("S "))
    #expect(try reopened.isEvicted(table: "todos", pk: "a"))
    #expect(!Journal.isPending(at: store.journalPath))
  }
}
