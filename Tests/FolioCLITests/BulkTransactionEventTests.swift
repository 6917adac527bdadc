import Folio
import FolioTestSupport
import Foundation
import Testing

/// Issue 13, part 3: an import or a sync checkout made by another process
/// reaches a live query as one event, never as the states in between
/// (the writer leaves `.git/folio/transaction` while it lands files).
struct BulkTransactionEventTests {
  typealias Events = QueryLiveQueryCLITests.Events

  static func rows(_ count: Int, from start: Int) -> String {
    (start..<start + count).map { #"{"id":"r\#($0)","lastUpdate":\#($0),"title":"row \#($0)"}"# }
      .joined(separator: "\n") + "\n"
  }

  /// Everything delivered so far, once `count` items are in and `fence`
  /// has passed: an item too many for the writes before it comes first.
  static func settled(_ events: Events<Int>, count: Int, fence: LiveQueryFence) throws -> [Int] {
    _ = events.wait(for: count)
    #expect(try fence.pass())
    return events.wait(for: 0)
  }

  @Test func aLargeImportInAnotherProcessArrivesAsOneEvent() throws {
    let scratch = try CLIScratch(yaml: CLIScratch.yamlWithNotes)
    defer { scratch.remove() }
    try scratch.folio("init")
    // A table that is not empty: the import lands file by file.
    try scratch.folio("apply", "todos", "seed", "--op", "insert", "--columns", #"{"lastUpdate": -1}"#)
    let store = try Store(at: URL(fileURLWithPath: scratch.path))
    let all = Events<Int>()
    let live = try store.collection("todos").query().observeLocal { documents, _ in
      all.append(documents.count)
    }
    defer { live.stop() }
    let window = Events<Int>()
    let liveWindow = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToLast(5)
      .observeLocal { documents, _ in window.append(documents.first?["lastUpdate"]?.intValue ?? -100) }
    defer { liveWindow.stop() }
    #expect(all.wait(for: 1) == [1])
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }
    for round in 0..<2 {
      try scratch.write("rows\(round).ndjson", Self.rows(300, from: round * 300))
      let imported = try scratch.folio("import", "todos", "rows\(round).ndjson", "--format", "ndjson")
      #expect(imported.status == 0, "\(imported.stderr)")
      #expect(
        try Self.settled(all, count: round + 2, fence: fence) == Array([1, 301, 601].prefix(round + 2)))
    }
    // The window went straight from the seed to the last five rows.
    #expect(try Self.settled(window, count: 3, fence: fence) == [-1, 295, 595])
  }

  @Test func aLargeSyncInAnotherProcessArrivesAsOneEvent() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let remote = scratch.path + "/remote.git"
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    try scratch.write("a/folio.yaml", CLIScratch.yamlWithNotes)
    let a = try Store.create(at: URL(fileURLWithPath: scratch.path + "/a"))
    #expect(try FolioRunner.shell("git remote add origin file://\(remote)", in: scratch.path + "/a") == 0)
    try a.apply(table: "todos", pk: "seed", op: .insert, columns: ["lastUpdate": -1])
    try a.sync()
    let b = try Store.clone(url: "file://" + remote, into: URL(fileURLWithPath: scratch.path + "/b"))
    let all = Events<Int>()
    let live = try b.collection("todos").query().observeLocal { documents, _ in all.append(documents.count) }
    defer { live.stop() }
    #expect(all.wait(for: 1) == [1])
    let fence = try LiveQueryFence(store: b)
    defer { fence.stop() }

    try scratch.write("rows.ndjson", Self.rows(300, from: 0))
    try a.importRows(into: "todos", options: ImportOptions(path: scratch.path + "/rows.ndjson"))
    try a.sync()
    let synced = try FolioRunner.run(["-C", "b", "sync"], in: scratch.path)
    #expect(synced.status == 0, "\(synced.stderr)")
    #expect(try Self.settled(all, count: 2, fence: fence) == [1, 301])
    // And back: a change of many documents in one transaction on a.
    try a.write { tx in
      for i in 0..<300 { try tx.apply(table: "todos", pk: "r\(i)", op: .remove) }
    }
    try a.sync()
    let again = try FolioRunner.run(["-C", "b", "sync"], in: scratch.path)
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try Self.settled(all, count: 3, fence: fence) == [1, 301, 1])
  }
}
