import Folio
import FolioGit
import FolioSystem
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// A remote that goes away in the middle of a push: the sync fails with a
/// clear error, the store stays consistent, and once the server is back a
/// rerun finishes the job.
@Suite struct RemoteFaultTests {
  @Test func daemonKilledMidPushThenRerunFinishes() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: SyncTests.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 1, "tags": ["a"]])
    try a.sync()
    let b = try fixture.clone("b")
    var daemon = try GitDaemon(base: fixture.scratch.path)
    let port = daemon.port
    try git(["remote", "set-url", "origin", daemon.url("remote.git")], in: a.rootPath)
    try git(["remote", "set-url", "origin", daemon.url("remote.git")], in: b.rootPath)
    try b.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 10]])
    try b.sync()
    // From now on the server takes its time accepting a push, long enough
    // to be killed while the push is in progress; the hook marks the moment
    // it holds the pack and has not answered yet, then waits for the crash
    // below (which kills it) for up to 30 s.
    let hook = fixture.remotePath + "/hooks/pre-receive"
    let marker = fixture.scratch.path + "/receiving"
    try "#!/bin/sh\ncat >/dev/null\ntouch \(marker)\nsleep 30\n".write(
      toFile: hook, atomically: true, encoding: .utf8)
    chmod(hook, 0o755)
    try a.apply(
      table: "todos", pk: "t", op: .update,
      transforms: ["views": ["op": "increment", "by": 5], "tags": ["op": "arrayUnion", "values": ["x"]]])

    // a fetches, merges b's change and pushes; the daemon dies mid-push.
    let outcome = Mutex<Result<SyncSummary, any Error>?>(nil)
    let thread = Thread { outcome.withLock { $0 = Result { try a.sync() } } }
    thread.start()
    #expect(eventually { FileSystem.exists(marker) }, "the push never reached the server")
    daemon.crash()
    try #require(eventually { outcome.withLock { $0 != nil } }, "the sync never returned")
    let result = try #require(outcome.withLock { $0 })
    let error = try #require(throws: FolioError.self) { try result.get() }
    #expect([.remote, .pushRejected].contains(error.code), "\(error)")

    // Consistent: the merge is committed locally, the working tree matches
    // it, and the store reads and writes as usual.
    try git(["diff", "--quiet", "HEAD"], in: a.rootPath)
    #expect(try a.status().tables.allSatisfy { $0.changedDocuments.isEmpty && $0.pendingOps == 0 })
    #expect(try a.collection("todos").findByID("t").exec()?.value["views"] == 16)
    let remoteHead = try git(["rev-parse", "main"], in: fixture.remotePath).output
    #expect(remoteHead != (try git(["rev-parse", "HEAD"], in: a.rootPath).output), "the push landed")

    // Back up on the same address (without the slow hook): the rerun pushes.
    try FileManager.default.removeItem(atPath: hook)
    daemon = try GitDaemon(base: fixture.scratch.path, port: port)
    let summary = try a.sync()
    #expect(summary.pushed)
    try b.sync()
    #expect(try tableFiles(a) == tableFiles(b))
    let document = try #require(try b.collection("todos").findByID("t").exec()?.value)
    #expect(document["views"] == 16)
    #expect(document["tags"] == ["a", "x"])
    daemon.stop()
  }

  @Test func daemonKilledMidFetchThenRerunFinishes() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: SyncTests.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 1])
    try a.sync()
    let b = try fixture.clone("b")
    try b.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 10]])
    try b.sync()
    // The server is slow to build the pack a fetch asks for: upload-pack
    // runs its pack-objects through this hook (a setting git reads only from
    // the global config, hence GIT_CONFIG_GLOBAL for the daemon), which
    // waits for the crash below (which kills it) for up to 30 s.
    let marker = fixture.scratch.path + "/packing"
    let hook = fixture.scratch.path + "/slow-pack-objects"
    try "#!/bin/sh\ntouch \(marker)\nsleep 30\nexec \"$@\"\n".write(
      toFile: hook, atomically: true, encoding: .utf8)
    chmod(hook, 0o755)
    let global = fixture.scratch.path + "/gitconfig"
    try "[uploadpack]\n\tpackObjectsHook = \(hook)\n".write(toFile: global, atomically: true, encoding: .utf8)
    var daemon = try GitDaemon(base: fixture.scratch.path, environment: ["GIT_CONFIG_GLOBAL": global])
    let port = daemon.port
    try git(["remote", "set-url", "origin", daemon.url("remote.git")], in: a.rootPath)
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 5]])
    let before = try git(["rev-parse", "HEAD"], in: a.rootPath).output

    let outcome = Mutex<Result<SyncSummary, any Error>?>(nil)
    let thread = Thread { outcome.withLock { $0 = Result { try a.sync() } } }
    thread.start()
    #expect(eventually { FileSystem.exists(marker) }, "the fetch never reached the server")
    daemon.crash()
    try #require(eventually { outcome.withLock { $0 != nil } }, "the sync never returned")
    let result = try #require(outcome.withLock { $0 })
    let error = try #require(throws: FolioError.self) { try result.get() }
    #expect(error.code == .remote, "\(error)")

    // The local change is committed, nothing was merged, and the tree is
    // clean and usable.
    try git(["diff", "--quiet", "HEAD"], in: a.rootPath)
    #expect(
      try git(["rev-parse", "HEAD"], in: a.rootPath).output != before, "the pending op was not committed")
    #expect(
      try git(["rev-parse", "-q", "--verify", "HEAD^2"], in: a.rootPath, allowFailure: true).status != 0,
      "a merge was made without the fetched commits")
    #expect(try a.collection("todos").findByID("t").exec()?.value["views"] == 6)

    daemon = try GitDaemon(base: fixture.scratch.path, port: port)
    let summary = try a.sync()
    #expect(summary.action == .merged && summary.pushed)
    try git(["remote", "set-url", "origin", daemon.url("remote.git")], in: b.rootPath)
    try b.sync()
    #expect(try b.collection("todos").findByID("t").exec()?.value["views"] == 16)
    #expect(try tableFiles(a) == tableFiles(b))
    daemon.stop()
  }
}
