import Folio
import FolioTestSupport
import Foundation
import Testing

/// A `folio sync` merge reaches the streams of a `folio serve` on that
/// replica as one event: the sync lands its checkout as one transaction,
/// and a stream never shows a state between.
struct ServeSyncCLITests {
  @Test func aSyncMergeIsOneEventOnTheStream() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let remote = scratch.path + "/remote.git"
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    try scratch.write("a/folio.yaml", CLIScratch.yaml)
    let a = try Store.create(at: URL(fileURLWithPath: scratch.path + "/a"))
    #expect(try FolioRunner.shell("git remote add origin file://\(remote)", in: scratch.path + "/a") == 0)
    try a.write { tx in
      try tx.apply(table: "todos", pk: "k1", op: .insert, columns: ["views": 0, "title": "one"])
      try tx.apply(table: "todos", pk: "k2", op: .insert, columns: ["views": 0, "title": "two"])
    }
    try a.sync()
    let b = try Store.clone(url: "file://" + remote, into: URL(fileURLWithPath: scratch.path + "/b"))
    // Both sides change k1 (a merge, not a fast-forward); b also changes k2,
    // in two transactions of its own.
    try b.apply(table: "todos", pk: "k1", op: .update, transforms: ["views": .increment(2)])
    try b.apply(table: "todos", pk: "k2", op: .update, columns: ["title": "two, from b"])
    try b.sync()
    try a.apply(table: "todos", pk: "k1", op: .update, transforms: ["views": .increment(1)])

    let server = try ServeCLITests.Server(in: scratch.path + "/a")
    defer { #expect(server.stop() == 0) }
    let stream = try ServeCLITests.EventClient(server.base + "/todos.json")
    defer { stream.stop() }
    #expect(stream.event(1)?.1?["data"]?["k1"]?["views"] == 1)
    let synced = try FolioRunner.run(["sync"], in: scratch.path + "/a")
    #expect(synced.status == 0, "\(synced.stderr)")
    let merged = try #require(stream.event(2))
    #expect(merged.0 == "patch")
    #expect(merged.1?["path"] == "/")
    // The increments summed, and b's other transaction came in the same event.
    #expect(merged.1?["data"]?["k1"]?["views"] == 3)
    #expect(merged.1?["data"]?["k2"]?["title"] == "two, from b")
    // Nothing more: no event for a state in between. A fence: a document
    // written behind the server's back after the sync has ended, which its
    // watcher hears of after everything the sync wrote. An event too many
    // comes before the fence's, or, read together with it, makes the
    // fence's event more than a put of the fence.
    Save.tempThenRename(scratch.path + "/a/data/todos/fence.json", #"{"id": "fence", "views": 0}"#)
    let fence = try #require(stream.event(3))
    #expect(fence.0 == "put" && fence.1?["path"] == "/fence", "\(fence)")
    #expect(stream.count == 3)
    #expect(try ServeCLITests.curl("GET", server.base + "/todos/k1/views.json").body == "3")
  }
}
