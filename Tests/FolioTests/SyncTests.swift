import Folio
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import FolioTestSupport
import Foundation
import Synchronization
import Testing

@testable import FolioGit

@Suite struct SyncTests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: todos
        columns:
          views: counter
          tags: set
    """

  func doc(_ store: Store, _ pk: String) throws -> JSONObject? {
    try store.collection("todos").findByID(pk).exec()?.value
  }

  @Test func twoReplicasMergeByReplayThroughFileRemote() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["title": "first", "views": 1, "tags": ["a"]])
    try a.sync()
    let b = try fixture.clone("b")
    #expect(try doc(b, "t")?["views"] == 1)
    try a.apply(
      table: "todos", pk: "t", op: .update, columns: ["title": "from a"],
      transforms: ["views": ["op": "increment", "by": 2], "tags": ["op": "arrayUnion", "values": ["x"]]])
    try b.apply(
      table: "todos", pk: "t", op: .update, columns: ["title": "from b"],
      transforms: ["views": ["op": "increment", "by": 40], "tags": ["op": "arrayUnion", "values": ["y"]]])
    let first = try a.sync()
    #expect(first.pushed)
    let second = try b.sync()
    #expect(second.action == .merged)
    #expect(second.resolvedDocuments == 1)
    try a.sync()
    let merged = try #require(try doc(a, "t"))
    #expect(merged["views"] == 43)
    #expect(merged["tags"] == ["a", "x", "y"])
    #expect(merged["title"] == "from b")  // b's assignment has the later stamp
    #expect(try tableFiles(a) == tableFiles(b))
    // Nothing is left pending and git agrees the tree is clean.
    #expect(try git(["status", "--porcelain"], in: a.rootPath).output.isEmpty)
    #expect(try git(["status", "--porcelain"], in: b.rootPath).output.isEmpty)
  }

  /// A merge whose checkout replaces hundreds of documents and writes
  /// hundreds of conflict records: what two threads write, in two
  /// folders, with the replaced files unlinked on threads of their own.
  @Test func aLargeCheckoutLeavesEveryFileWholeAndNoTempFile() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    let pks = (0..<300).map { "d\($0)" }
    try a.write { tx in
      for pk in pks {
        _ = try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["title": "t", "views": 1])
      }
    }
    try a.sync()
    let b = try fixture.clone("b")
    for (store, side, by) in [(a, "a", 2), (b, "b", 40)] {
      try store.write { tx in
        for pk in pks {
          _ = try tx.apply(
            table: "todos", pk: pk, op: .update, columns: ["title": .string("from \(side)")],
            transforms: ["views": ["op": "increment", "by": .integer(by)]])
        }
      }
    }
    try a.sync()
    #expect(try b.sync().action == .merged)
    try a.sync()
    for pk in pks { #expect(try doc(b, pk)?["views"] == 43, "\(pk)") }
    #expect(try tableFiles(a) == tableFiles(b))
    #expect(try b.conflicts(table: "todos").count == pks.count)
    let names = (FileManager.default.enumerator(atPath: b.rootPath)?.allObjects as? [String]) ?? []
    #expect(names.filter { $0.hasSuffix(".folio-tmp") } == [])
    #expect(try git(["status", "--porcelain"], in: b.rootPath).output.isEmpty)
  }

  /// The newest stamp in a store's own op log.
  func newestOwnStamp(_ store: Store) throws -> HLC {
    let bytes = try #require(try FileSystem.read(store.opLogPath))
    let line = try #require(OpHistory.lastLine(of: bytes))
    return try Op(json: JSONValue(parsing: Array(line))).hlc
  }

  /// An op older than one the merge base already holds (its replica was
  /// offline while another's newer op spread) rewinds the document: the
  /// merge still gives what every op in stamp order gives.
  @Test func anOpOlderThanTheBaseRewindsTheDocument() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["title": "start", "views": 0])
    try a.sync()
    let offline = try fixture.clone("offline")
    let later = try fixture.clone("later")
    try offline.apply(table: "todos", pk: "t", op: .update, columns: ["title": "from offline"])
    let older = try newestOwnStamp(offline)
    // a's op must carry the later stamp: wait for the wall clock to pass.
    while SystemClock.nowMilliseconds() <= older.wall { sched_yield() }
    try a.apply(table: "todos", pk: "t", op: .update, columns: ["title": "from a"])
    #expect(try newestOwnStamp(a) > older)
    try a.sync()
    // `later`'s merge base will hold a's op; the offline op is older. The
    // offline replica's merge commit is dated after `later`'s op (commit
    // times are whole seconds), so a replay on the base would let that
    // commit's synthetic op undo `later`'s title.
    try later.sync()
    try later.apply(
      table: "todos", pk: "t", op: .update, columns: ["title": "from later"],
      transforms: ["views": ["op": "increment", "by": 5]])
    let nextSecond = (try newestOwnStamp(later).wall / 1000 + 1) * 1000
    while SystemClock.nowMilliseconds() < nextSecond { sched_yield() }
    try offline.sync()
    #expect(try doc(offline, "t")?["title"] == "from a")
    try later.sync()
    try offline.sync()
    try a.sync()
    for store in [a, offline, later] {
      let merged = try #require(try doc(store, "t"))
      #expect(merged["title"] == "from later")
      #expect(merged["views"] == 5)
    }
    #expect(try tableFiles(a) == tableFiles(later))
    #expect(try tableFiles(a) == tableFiles(offline))
  }

  @Test func removeBeatsConcurrentUpdateAndConcurrentInsertsUpsert() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "gone", op: .insert, columns: ["title": "x"])
    try a.sync()
    let b = try fixture.clone("b")
    try b.apply(table: "todos", pk: "gone", op: .update, columns: ["title": "edited"])
    try a.apply(table: "todos", pk: "gone", op: .remove)
    try a.apply(table: "todos", pk: "new", op: .insert, columns: ["title": "a", "x": 1])
    try b.apply(table: "todos", pk: "new", op: .insert, columns: ["title": "b", "y": 2])
    try b.sync()
    try a.sync()
    try b.sync()
    #expect(try doc(a, "gone") == nil)
    // b inserted last, so its title wins; both inserts' columns survive.
    #expect(try doc(a, "new") == ["id": "new", "title": "b", "x": 1, "y": 2])
    #expect(try tableFiles(a) == tableFiles(b))
  }

  @Test func threeReplicasThroughGitDaemon() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "c", op: .insert, columns: ["views": 0])
    try a.sync()
    let daemon = try fixture.serveThroughDaemon(for: a)
    defer { daemon.stop() }
    let b = try fixture.clone("b", url: daemon.url("remote.git"))
    let c = try fixture.clone("c", url: daemon.url("remote.git"))
    for (store, amount) in [(a, 1), (b, 10), (c, 100)] {
      try store.apply(
        table: "todos", pk: "c", op: .update,
        transforms: ["views": ["op": "increment", "by": .number(String(amount))]])
    }
    for store in [a, b, c, a, b] { try store.sync() }
    for store in [a, b, c] { #expect(try doc(store, "c")?["views"] == 111) }
    #expect(try tableFiles(a) == tableFiles(c))
  }

  @Test func deadRemoteFailsClearlyAndRerunFinishes() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    let daemon = try fixture.serveThroughDaemon(for: a)
    daemon.stop()
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 1])
    let error = try #require(throws: FolioError.self) { try a.sync() }
    #expect(error.code == .remote)
    #expect(error.message.contains("cannot reach remote 'origin'"))
    // The local commit happened; the store is usable and nothing is lost.
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
    try git(["remote", "set-url", "origin", fixture.remoteURL], in: a.rootPath)
    let summary = try a.sync()
    #expect(summary.pushed)
    let b = try fixture.clone("b")
    #expect(try doc(b, "t")?["views"] == 2)
  }

  @Test func rejectedPushIsAnErrorNotSuccess() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    let daemon = try fixture.serveThroughDaemon(for: a)
    defer { daemon.stop() }
    let attempts = fixture.scratch.path + "/attempts"
    try fixture.installHook(
      "pre-receive", "#!/bin/sh\necho x >> '\(attempts)'\necho 'no pushes today' >&2\nexit 1\n")
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 1])
    let error = try #require(throws: FolioError.self) { try a.sync() }
    #expect(error.code == .pushRejected)
    // Refused as often as it takes to tell a verdict from a lost race.
    let tries = try String(contentsOfFile: attempts, encoding: .utf8).split(separator: "\n").count
    #expect(tries == SyncEngine.refusalsForVerdict, "\(tries)")
    // The remote stood still, so this is its verdict: not a race, not the
    // network.
    #expect(error.description.contains("remote 'origin' refused the push"), "\(error)")
    #expect(error.description.contains("declined"), "\(error)")
    #expect(!error.description.contains("network") && !error.description.contains("kept moving"), "\(error)")
    unlink(fixture.remotePath + "/hooks/pre-receive")
    #expect(try a.sync().pushed)
    #expect(try doc(try fixture.clone("b"), "t")?["views"] == 1)
  }

  /// A rival push can hold the remote's ref lock and then fail itself, so
  /// the remote refuses once while its tip stands still: that is a race,
  /// and the sync tries again rather than calling it the remote's verdict.
  @Test func oneRefusalAtAStillTipIsRetried() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    let daemon = try fixture.serveThroughDaemon(for: a)
    defer { daemon.stop() }
    let marker = fixture.scratch.path + "/refused-once"
    try fixture.installHook(
      "pre-receive",
      "#!/bin/sh\n[ -e '\(marker)' ] && exit 0\ntouch '\(marker)'\necho 'ref is locked' >&2\nexit 1\n")
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 7])
    let summary = try a.sync()
    #expect(summary.pushed && summary.rounds == 2, "\(summary)")
    #expect(FileManager.default.fileExists(atPath: marker))
    #expect(try doc(try fixture.clone("b"), "t")?["views"] == 7)
  }

  @Test func pushThatLosesARaceIsRetriedAfterMerging() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 0])
    try a.sync()
    let b = try fixture.clone("b")
    let daemon = try fixture.serveThroughDaemon(for: a)
    defer { daemon.stop() }
    try b.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 10]])
    try b.commit()
    // While a's push is on its way, b's push lands first (from inside the
    // hook), so a's is refused as stale.
    let marker = fixture.scratch.path + "/raced"
    let script = """
      #!/bin/sh
      if [ ! -e '\(marker)' ]; then
        touch '\(marker)'
        cd '\(b.rootPath)' && env -u GIT_DIR -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git push -q '\(fixture.remotePath)' HEAD:refs/heads/main >/dev/null 2>&1
        exit 1
      fi
      exit 0
      """
    try fixture.installHook("pre-receive", script)
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
    let summary = try a.sync()
    #expect(summary.pushed)
    #expect(summary.rounds == 2)
    try b.sync()
    #expect(try doc(b, "t")?["views"] == 11)
  }

  @Test func editsMadeOutsideFolioMergeByColumnKind() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 5, "tags": ["a"], "title": "x"])
    try a.sync()
    let b = try fixture.clone("b")
    let c = try fixture.clone("c")
    // a: a person edits the file, no watcher; `folio commit` records it.
    try fixture.scratch.write(
      "r0/" + (try a.file("todos", "t")), #"{"id": "t", "views": 8, "tags": ["a", "p"], "title": "x"}"#)
    let committed = try a.commit()
    #expect(committed.syntheticOps == 1)
    // b: a person edits and commits with plain git: no op at all.
    try fixture.scratch.write(
      "b/" + (try b.file("todos", "t")), #"{"id": "t", "views": 15, "tags": ["q"], "title": "x"}"#)
    try git(["commit", "-qam", "by hand"], in: b.rootPath)
    // c: an ordinary Folio mutation.
    try c.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 100]])
    for store in [a, b, c, a, b] { try store.sync() }
    let merged = try #require(try doc(a, "t"))
    #expect(merged["views"] == .number(String(5 + 3 + 10 + 100)))
    #expect(Set((merged["tags"]?.arrayValue ?? []).compactMap(\.stringValue)) == ["p", "q"])
    #expect(try tableFiles(a) == tableFiles(b))
    #expect(try tableFiles(a) == tableFiles(c))
  }

  /// The op log's stat data can go stale while its bytes still equal HEAD
  /// (git smudges an entry written in the same second as the index); the
  /// synthetic op a commit logs must still go into that commit.
  @Test func aSyntheticOpIsCommittedWhenTheLogsStatIsStale() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 5, "title": "x"])
    try a.commit()
    var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
    #expect(utimensat(AT_FDCWD, a.opLogPath, &times, 0) == 0)
    try fixture.scratch.write("r0/" + (try a.file("todos", "t")), #"{"id": "t", "views": 9, "title": "x"}"#)
    #expect(try a.commit().syntheticOps == 1)
    let status = try git(["status", "--porcelain"], in: a.rootPath).output
    #expect(status.isEmpty, "\(status)")
    let committed = try git(["show", "HEAD:.folio/ops/\(a.replicaID).ndjson"], in: a.rootPath).output
    #expect(committed.contains(#""by":4,"#), "\(committed)")
  }

  @Test func filesAddedOutsideFolioAreLoggedCompactlyAndStillMerge() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    let path = a.rootPath + "/" + (try a.file("todos", "n"))
    try FileSystem.makeDirectories(FileSystem.split(path).directory)
    try FileSystem.writeAtomically(
      path, Array(#"{"id": "n", "views": 5, "tags": ["a"], "title": "new"}"#.utf8), sync: false)
    #expect(try a.commit().syntheticOps == 1)
    // The body is in the commit; the log says only that it was inserted.
    let log = String(decoding: try #require(try FileSystem.read(a.opLogPath)), as: UTF8.self)
    let line = try #require(log.split(separator: "\n").last)
    #expect(line.contains(#""tree":true"#) && line.contains(#""op":"insert""#), "\(line)")
    #expect(!line.contains("views") && !line.contains("new"), "\(line)")
    try a.sync()
    let b = try fixture.clone("b")
    #expect(try doc(b, "n")?["views"] == 5)
    try a.apply(table: "todos", pk: "n", op: .update, transforms: ["views": ["op": "increment", "by": 3]])
    try b.apply(
      table: "todos", pk: "n", op: .update, columns: ["title": "renamed"],
      transforms: ["views": ["op": "increment", "by": 2]])
    try a.sync()
    try b.sync()
    try a.sync()
    #expect(try doc(a, "n")?["views"] == 10)
    #expect(try doc(a, "n")?["title"] == "renamed")
    #expect(try tableFiles(a) == tableFiles(b))
  }

  @Test func concurrentApplyDuringSyncLosesNothing() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 0])
    try a.sync()
    let b = try fixture.clone("b")
    try b.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 1000]])
    try b.sync()
    let writer = Thread {
      for _ in 0..<40 {
        try! a.apply(
          table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
      }
    }
    let done = Atomic<Bool>(false)
    let thread = Thread {
      for _ in 0..<3 { try! a.sync() }
      done.store(true, ordering: .releasing)
    }
    writer.start()
    thread.start()
    #expect(eventually { done.load(ordering: .acquiring) }, "the syncs never finished")
    // Let the writer finish, then settle.
    #expect(eventually { writer.isFinished }, "the writer never finished")
    try a.sync()
    try b.sync()
    #expect(try doc(a, "t")?["views"] == 1040)
    #expect(try doc(b, "t")?["views"] == 1040)
  }

  /// The remote-tracking ref only reports what was fetched: when another
  /// writer holds it locked (a push, the user's git), the sync still
  /// merges and pushes, and leaves the ref to that writer.
  @Test func aLockedRemoteTrackingRefDoesNotFailTheSync() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 1])
    try a.sync()
    let b = try fixture.clone("b")
    try a.apply(table: "todos", pk: "t", op: .update, columns: [:], transforms: ["views": .increment(10)])
    try a.sync()
    func tracking() throws -> String {
      try git(["rev-parse", "refs/remotes/origin/main"], in: b.rootPath).output
    }
    let before = try tracking()
    // A lock this live process holds: never taken for a dead one's.
    let lock = b.rootPath + "/.git/refs/remotes/origin/main.lock"
    try FileManager.default.createDirectory(
      atPath: b.rootPath + "/.git/refs/remotes/origin", withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: lock, contents: Data()))
    try b.sync()
    #expect(try doc(b, "t")?["views"] == 11)
    #expect(try tracking() == before, "the locked ref was written")
    try FileManager.default.removeItem(atPath: lock)
    try b.sync()
    #expect(try tracking() != before)
  }

  @Test func evictedDocumentsStayInGitAndComeBackWhenSubscribed() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t1", op: .insert, columns: ["title": "one"])
    try a.apply(table: "todos", pk: "t2", op: .insert, columns: ["title": "two"])
    try a.sync()
    let b = try fixture.clone("b")
    #expect(try a.collection("todos").findByID("t1").evict())
    #expect(try a.collection("todos").findByID("t2").evict())
    try a.sync()
    // Not committed as deletions: still in a's HEAD and on the remote.
    let tree = try git(["ls-tree", "-r", "--name-only", "HEAD"], in: a.rootPath).output
    let (t1, t2) = (try a.file("todos", "t1"), try a.file("todos", "t2"))
    #expect(tree.contains(t1) && tree.contains(t2))
    #expect(try git(["status", "--porcelain"], in: a.rootPath).output.isEmpty)
    try b.sync()
    #expect(try doc(b, "t1") != nil)
    // A remote change arrives, but the evicted copy stays away.
    try b.apply(table: "todos", pk: "t1", op: .update, columns: ["title": "one, edited"])
    try b.sync()
    try a.sync()
    #expect(try doc(a, "t1") == nil)
    #expect(try a.isEvicted(table: "todos", pk: "t1"))
    // Subscribing brings it back on the next sync, with the remote's data.
    let subscription = try a.collection("todos").findByID("t1").subscribe()
    try a.sync()
    #expect(try doc(a, "t1")?["title"] == "one, edited")
    #expect(try !a.isEvicted(table: "todos", pk: "t1"))
    subscription.cancel()
    // A query subscription covers t2 by its title.
    let query = try a.collection("todos").query().where(Predicate(parsing: #"title == "two""#)).subscribe()
    try a.sync()
    #expect(try doc(a, "t2")?["title"] == "two")
    query.cancel()
    #expect(try git(["status", "--porcelain"], in: a.rootPath).output.isEmpty)
  }

  @Test func mergesAfterCompactionStillResolve() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 0, "tags": ["a"]])
    try a.sync()
    let offline = try fixture.clone("offline")
    for _ in 0..<5 {
      try a.apply(
        table: "todos", pk: "t", op: .update,
        transforms: ["views": ["op": "increment", "by": 1], "tags": ["op": "arrayUnion", "values": ["x"]]])
    }
    try a.sync()
    let compaction = try a.compact()
    #expect(compaction.droppedOps == 6)
    #expect(compaction.keptOps == 0)
    try a.sync()
    // The offline replica's base predates the compaction: a's ops are gone,
    // so a's side is diffed into a synthetic op, by column kind.
    try offline.apply(
      table: "todos", pk: "t", op: .update,
      transforms: ["views": ["op": "increment", "by": 7], "tags": ["op": "arrayUnion", "values": ["y"]]])
    try offline.sync()
    try a.sync()
    #expect(try doc(a, "t")?["views"] == 12)
    #expect(try doc(a, "t")?["tags"] == ["a", "x", "y"])
    #expect(try tableFiles(a) == tableFiles(offline))
    // New ops after compaction still get later stamps than everything merged.
    try a.apply(table: "todos", pk: "t", op: .update, columns: ["title": "after"])
    #expect(try a.ops(table: "todos", pk: "t").last?.mutation.assignments.first?.value == "after")
  }

  @Test func bigCommitsWriteOnePackAndLeaveGitClean() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    for i in 0..<300 {
      try scratch.write(try store.file("todos", "d\(i)"), #"{"id": "d\#(i)", "views": \#(i)}"#)
    }
    let summary = try store.commit(message: "bulk")
    #expect(summary.documents == 300)
    #expect(summary.syntheticOps == 300)
    let objects = try git(["count-objects", "-v"], in: store.rootPath).output
    #expect(objects.contains("count: 0\n"), "no loose objects expected: \(objects)")
    #expect(objects.contains("packs: 1\n"), "\(objects)")
    #expect(try git(["status", "--porcelain"], in: store.rootPath).output.isEmpty)
    #expect(try git(["fsck", "--no-progress"], in: store.rootPath).status == 0)
    #expect(
      try git(["ls-tree", "-r", "--name-only", "HEAD"], in: store.rootPath).output.contains(
        try store.file("todos", "d299")))
  }
}
