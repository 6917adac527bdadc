import Folio
import FolioCore
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioGit
@testable import FolioWatch

/// `Store.folderMatchesHead`, the quick answer the catch-up of `folio watch`
/// and `folio commit` use for a folder nobody touched: true only when every
/// document file is as committed; any change sends the scan the full way.
struct UnchangedFolderTests {
  static func matches(_ store: Store) throws -> Bool {
    let repository = try store.openRepository()
    let index = try repository.index()
    let table = try #require(store.config.table(named: "todos"))
    return try WorkTreeScan(store: store).folderMatchesHead(
      table, headTree: try repository.headCommit()?.tree(), index: index, repository: repository,
      evicted: try store.evictions.load()["todos"] ?? [])
  }

  static func committed() throws -> (Store, Scratch) {
    let (store, scratch) = try makeStore()
    try store.write { transaction in
      for pk in ["a", "b", "c"] {
        _ = try transaction.put(table: "todos", pk: pk, document: ["title": .string(pk)])
      }
    }
    try store.commit(message: "start")
    return (store, scratch)
  }

  @Test func aCommittedFolderMatchesWhateverElseLiesInIt() throws {
    let (store, scratch) = try Self.committed()
    defer { scratch.remove() }
    #expect(try Self.matches(store))
    // Files the scan never looks at do not count: a swap file beside a
    // document's file, a note in the table's folder.
    try EditorSave.inPlace(
      FileSystem.split(try store.editorPath("todos", "a")).directory + "/.a.json.swp", "x")
    try EditorSave.inPlace(scratch.path + "/data/todos/notes.txt", "x")
    #expect(try Self.matches(store))
  }

  @Test func noStoreWithoutACommitMatches() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { _ = try $0.put(table: "todos", pk: "a", document: [:]) }
    #expect(try !Self.matches(store))
  }

  enum Change: String, CaseIterable {
    case editSameSize, touch, newFile, delete, writeThroughFolio, replaceByRename
  }

  @Test(arguments: Change.allCases)
  func everyChangeIsNoticed(_ change: Change) throws {
    let (store, scratch) = try Self.committed()
    defer { scratch.remove() }
    let b = try store.editorPath("todos", "b")
    let before = try #require(try FileSystem.read(b))
    switch change {
    case .editSameSize:
      // Same length, same inode: only the modification time tells.
      try EditorSave.inPlace(
        b, String(decoding: before, as: UTF8.self).replacing(#""title": "b""#, with: #""title": "z""#))
    case .touch:
      var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
      #expect(utimensat(AT_FDCWD, b, &times, 0) == 0)
    case .newFile: try EditorSave.inPlace(try store.editorPath("todos", "d"), #"{"id": "d"}"#)
    case .delete: #expect(unlink(b) == 0)
    case .writeThroughFolio: try store.write { _ = try $0.put(table: "todos", pk: "b", document: ["n": 1]) }
    case .replaceByRename:
      // The same bytes in a new file: a new inode.
      try EditorSave.tempThenRename(b, String(decoding: before, as: UTF8.self))
    }
    #expect(try !Self.matches(store))
    // The full scan then commits (or refreshes stat data), and the folder
    // matches again.
    try store.commit(message: "after \(change)")
    #expect(try Self.matches(store))
  }

  @Test func anEvictedDocumentCountsAsCommitted() throws {
    let (store, scratch) = try Self.committed()
    defer { scratch.remove() }
    #expect(try store.collection("todos").findByID("a").evict())
    try store.commit(message: "evicted")
    #expect(!FileSystem.exists(scratch.path + "/" + (try store.file("todos", "a"))))
    #expect(try Self.matches(store))
    // A file back under an evicted name is not as committed.
    try EditorSave.inPlace(try store.editorPath("todos", "a"), #"{"id": "a", "title": "back"}"#)
    #expect(try !Self.matches(store))
  }

  /// The catch-up on an unchanged folder finds what the full scan finds:
  /// here, a document written through Folio after the commit and then
  /// deleted by hand is still a remove.
  @Test func theQuickPathStillFindsFolioWritesDeletedByHand() throws {
    let (store, scratch) = try Self.committed()
    defer { scratch.remove() }
    try store.write { _ = try $0.put(table: "todos", pk: "n", document: ["title": "new"]) }
    #expect(unlink(scratch.path + "/" + (try store.file("todos", "n"))) == 0)
    #expect(try Self.matches(store))
    var events: [WatchEvent] = []
    let session = try WatchSession(store: store, options: Watcher.Options()) { events.append($0) }
    try session.catchUp()
    let ops = events.compactMap {
      if case .recorded(let op, _) = $0 { "\(op.mutation.kind) \(op.pk)" } else { nil }
    }
    #expect(ops == ["remove n"])
  }
}
