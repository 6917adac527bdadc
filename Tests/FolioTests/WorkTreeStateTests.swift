import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioGit
@testable import FolioIndexDaemon

/// Status and commit from what a publisher saw change (``WorkTreeState``,
/// ``ChangedFiles``): they must find exactly what the full scan finds,
/// whatever is done to the files, and fall back to the full scan whenever
/// the state cannot be trusted.
@Suite(.serialized)
struct WorkTreeStateTests {
  /// What a scan found, comparable: each pending document with whether an
  /// op explains it and the kind of its synthetic change.
  static func summary(_ scan: PendingScan) -> [String] {
    scan.documents.map {
      "\($0.table.name)/\($0.pk) \($0.bytes == nil ? "deleted" : "present") \($0.synthetic.map { "\($0.kind)" } ?? "-")"
    }.sorted() + scan.problems.map { "problem \($0.path ?? "")" }.sorted()
  }

  /// The full scan: every file against HEAD, as with no state.
  static func fullScan(_ store: Store) throws -> [String] {
    let repository = try store.openRepository()
    let scan = try WorkTreeScan(store: store).scanPending(
      repository: repository, headTree: try repository.headCommit()?.tree(), index: try repository.index())
    return summary(scan)
  }

  /// The scan a status would take now, and whether it looked only at
  /// candidates.
  static func plannedScan(_ store: Store) throws -> (found: [String], restricted: Bool, why: String) {
    let repository = try store.openRepository()
    let head = try repository.headCommit()
    let (plan, prior, answer) = WorkTreeScan(store: store).scanPlan(head: head?.id, repository: repository)
    let scan = try WorkTreeScan(store: store).scanPending(
      repository: repository, headTree: try head?.tree(), index: { try repository.index() }, plan: plan)
    let why =
      prior == nil
      ? "no state"
      : prior?.token == nil ? "no token" : answer == nil ? "no answer" : "answer \(answer!.changed.keys)"
    return (summary(scan), plan?.indexFile != nil && !(plan?.candidates.isEmpty ?? true), why)
  }

  /// Writes `bytes` over the file at `path`, in place.
  static func writeInPlace(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw FileSystem.error(errno, "open", path: path) }
    defer { close(fd) }
    try FileSystem.writeAll(fd, bytes, path: path)
  }

  /// Saves `text` at `path` as editors do, by one of their ways: a rename
  /// over the file, a write in place, or a write through a backup copy.
  static func save(_ text: String, at path: String, way: Int) throws {
    switch way % 3 {
    case 0:
      try writeInPlace(path + ".tmp", Array(text.utf8))
      guard rename(path + ".tmp", path) == 0 else { throw FileSystem.error(errno, "rename", path: path) }
    case 1:
      try writeInPlace(path, Array(text.utf8))
    default:
      if FileSystem.exists(path) {
        guard rename(path, path + "~") == 0 else { throw FileSystem.error(errno, "rename", path: path) }
      }
      try writeInPlace(path, Array(text.utf8))
      unlink(path + "~")
    }
  }

  @Test func statusAndCommitFromThePublishersJournalMatchTheFullScan() throws {
    let seed = testSeed()
    try reportingSeed(seed) {
      var random = SplitMix(seed: seed)
      let (store, scratch) = try makeStore()
      defer { scratch.remove() }
      try store.write { transaction in
        for k in 0..<20 {
          _ = try transaction.put(table: "todos", pk: "d\(k)", document: ["n": .integer(Int64(k))])
        }
      }
      try store.commit(message: "start")
      let publisher = try store.publishIndexes()
      defer { publisher.stop() }
      // The first status after the publisher starts takes the full scan and
      // keeps its token; from then on only candidates are looked at.
      _ = try store.status()
      var restrictedScans = 0
      var reasons: [String] = []
      for round in 0..<60 {
        for _ in 0...(random.next() % 4) {
          let pk = "d\(random.next() % 30)"
          let path = scratch.path + "/" + (try store.file("todos", pk))
          // The folder of a new document, made as an editor user would.
          try FileSystem.makeDirectories(FileSystem.split(path).directory)
          switch random.next() % 8 {
          case 0, 1:
            try Self.save("{\"id\": \"\(pk)\", \"n\": \(round)}\n", at: path, way: Int(random.next() % 3))
          case 2: unlink(path)
          case 3:
            // Touched: the same bytes, new stat data.
            if let bytes = try FileSystem.read(path) { try Self.writeInPlace(path, bytes) }
          // A broken file refuses writes through Folio until fixed.
          case 4:
            _ = try? store.write {
              _ = try $0.put(table: "todos", pk: pk, document: ["n": .integer(Int64(round))])
            }
          case 5:
            _ = try? store.write { _ = try $0.remove(table: "todos", pk: pk) }
          case 6:
            // Not a document: a broken file is reported, and looked at again.
            try Self.save("{\"id\": \"\(pk)\", ", at: path, way: 0)
          default:
            try Self.save("{\"id\": \"\(pk)\", \"n\": \(round), \"x\": true}\n", at: path, way: 1)
          }
        }
        let planned = try Self.plannedScan(store)
        if planned.restricted { restrictedScans += 1 } else { reasons.append(planned.why) }
        #expect(planned.found == (try Self.fullScan(store)), "round \(round), seed \(seed)")
        _ = try store.status()
        if random.next() % 3 == 0 {
          try store.commit(message: "round \(round)")
          // Left out: the broken files only.
          #expect(
            try Self.fullScan(store).allSatisfy { $0.hasPrefix("problem") }, "round \(round), seed \(seed)")
          let porcelain = try git(["status", "--porcelain"], in: scratch.path).output
          let unexpected = porcelain.split(separator: "\n").filter { line in
            // A broken document stays uncommitted, as git sees too.
            !line.hasPrefix(" M data/todos/") && !line.hasPrefix("?? data/todos/")
          }
          #expect(unexpected.isEmpty, "round \(round), seed \(seed): \(porcelain)")
        }
      }
      #expect(
        restrictedScans >= 40, "seed \(seed): only \(restrictedScans) scans used the journal: \(reasons)")
    }
  }

  @Test func anIndexWrittenByGitOrANewPublisherMeansTheFullScan() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { _ = try $0.put(table: "todos", pk: "a", document: ["n": 1]) }
    try store.commit(message: "start")
    var publisher: IndexPublisher? = try store.publishIndexes()
    _ = try store.status()
    try scratch.write(try store.file("todos", "a"), "{\"id\": \"a\", \"n\": 2}\n")
    #expect(try Self.plannedScan(store).restricted)

    // Plain git writes the index: the state no longer holds.
    try scratch.write("README.md", "hello\n")
    try git(["add", "README.md"], in: scratch.path)
    #expect(try !Self.plannedScan(store).restricted)
    #expect(try Self.plannedScan(store).found == (try Self.fullScan(store)))
    // The commit takes what git staged too, as before.
    try store.commit(message: "both")
    let files = try git(["show", "--name-only", "--format=", "HEAD"], in: scratch.path).output
    let a = try store.file("todos", "a")
    #expect(files.contains("README.md") && files.contains(a))

    // A new publisher has a new journal: the old token means nothing to it.
    _ = try store.status()
    publisher?.stop()
    publisher = nil
    try scratch.write(try store.file("todos", "a"), "{\"id\": \"a\", \"n\": 3}\n")
    #expect(try !Self.plannedScan(store).restricted)
    #expect(try store.status().tables.first { $0.name == "todos" }?.changedDocuments == ["a"])
    publisher = try store.publishIndexes()
    defer { publisher?.stop() }
    #expect(try !Self.plannedScan(store).restricted)
    _ = try store.status()
    try scratch.write(try store.file("todos", "b"), "{\"id\": \"b\"}\n")
    let planned = try Self.plannedScan(store)
    #expect(planned.restricted)
    #expect(planned.found == (try Self.fullScan(store)))
    #expect(try store.status().tables.first { $0.name == "todos" }?.changedDocuments == ["a", "b"])
  }

  /// Whole and split (``SplitIndexPolicy``): git reads both, and libgit2
  /// reads the split one once Folio has written it whole.
  @Test(arguments: [SplitIndexPolicy.never, .always])
  func theIndexFileReadInPlaceMatchesLibgit2AndItsRewriteIsOneGitReads(policy: SplitIndexPolicy) throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { transaction in
      for k in 0..<50 {
        _ = try transaction.put(table: "todos", pk: "k\(k)", document: ["n": .integer(Int64(k))])
      }
    }
    try store.commit(message: "start")
    try store.write { _ = try $0.evict(table: "todos", pk: "k7") }
    try store.commit(message: "evicted")
    let repository = try store.openRepository()
    let libgit2 = try repository.index().entries
    let file = try #require(try GitIndexFile.open(repository.gitDirectory + "/index"))
    #expect(file.entries.count == libgit2.count)
    for (mine, theirs) in zip(file.entries, libgit2) {
      #expect(String(decoding: mine.path, as: UTF8.self) == theirs.path)
      #expect(mine.id == theirs.id)
      #expect(mine.skipWorktree == theirs.skipWorktree)
    }
    // Replace one, remove one, add one before the first and one after the last.
    let (k3, k4) = (try store.file("todos", "k3"), try store.file("todos", "k4"))
    try scratch.write(k3, "{\"id\": \"k3\", \"n\": 33}\n")
    try scratch.write("a.txt", "first\n")
    try scratch.write("z.txt", "last\n")
    unlink(scratch.path + "/" + k4)
    var edits: [GitIndex.Edit] = []
    for path in ["a.txt", k3, "z.txt"] {
      let id = try repository.writeBlob(Array(try #require(scratch.read(path)).utf8))
      edits.append(
        GitIndex.Edit(path: path, entry: GitIndex.entry(id: id, filePath: scratch.path + "/" + path)))
    }
    edits.append(GitIndex.Edit(path: k4, entry: nil))
    // In path order, as the index keeps them: where k4 falls depends on the table's layout.
    edits.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    try file.write(to: repository.gitDirectory + "/index", applying: edits, policy: policy)
    let reread = try #require(try GitIndexFile.open(repository.gitDirectory + "/index"))
    #expect(reread.isSplit == (policy == .always))
    #expect(reread.entries.count == libgit2.count + 1)
    let staged = try git(["diff", "--cached", "--name-status"], in: scratch.path).output
    let sorted = staged.split(separator: "\n").map(String.init).sorted()
    #expect(sorted == ["A\ta.txt", "A\tz.txt", "D\t" + k4, "M\t" + k3])
    #expect(try git(["diff", "--name-only"], in: scratch.path).output.isEmpty)
    let after = try repository.index()
    try after.readFromDisk()
    #expect(after.entries.count == libgit2.count + 1)
    #expect(after.entry(at: try store.file("todos", "k7"))?.skipWorktree == true)
    #expect(try git(["fsck", "--no-dangling"], in: scratch.path).status == 0)
  }

  /// Replica a, with ten documents synced and a publisher whose journal
  /// its last status took a token from, and replica b cloned from it.
  static func publishingReplicas(_ fixture: SyncFixture) throws -> (
    a: Store, b: Store, publisher: IndexPublisher
  ) {
    let yaml = "version: 1\ntables:\n  todos:\n    path: todos\n    columns:\n      views: counter\n"
    let a = try fixture.seed(yaml: yaml)
    for k in 0..<10 { try a.apply(table: "todos", pk: "t\(k)", op: .insert, columns: ["views": 1]) }
    try a.sync()
    let b = try fixture.clone("b")
    let publisher = try a.publishIndexes()
    _ = try a.status()
    return (a, b, publisher)
  }

  /// A sync's checkout leaves git's index holding the merged commit, and
  /// says so: the next status looks only at what changed, and finds what
  /// the full scan finds, including a file the checkout had to leave alone.
  @Test func aSyncLeavesAStateTheNextStatusUses() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let (a, b, publisher) = try Self.publishingReplicas(fixture)
    defer { publisher.stop() }
    try b.apply(table: "todos", pk: "t1", op: .update, transforms: ["views": ["op": "increment", "by": 5]])
    try b.apply(table: "todos", pk: "t9", op: .remove)
    try b.sync()
    try a.apply(table: "todos", pk: "t2", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    let synced = try a.sync(push: false)
    #expect(synced.action == .merged)
    // An edit by hand after the sync, and nothing else pending.
    try Self.save("{\"views\": 7}\n", at: a.rootPath + "/" + (try a.file("todos", "t3")), way: 0)
    let planned = try Self.plannedScan(a)
    #expect(planned.restricted)
    #expect(planned.found == (try Self.fullScan(a)))
    #expect(planned.found == ["todos/t3 present update"])
    #expect(
      try git(["status", "--porcelain"], in: a.rootPath).output == " M " + (try a.file("todos", "t3")) + "\n")
  }

  /// The journal names the files a sync's checkout wrote, so the next
  /// commit hashes them; they match HEAD and their index entries, so git's
  /// index is not rewritten (megabytes at every sync of a large store). A
  /// file touched since has stale stat data, and its entry is refreshed.
  @Test func filesACheckoutWroteDoNotMakeTheNextCommitRewriteGitsIndex() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let (a, b, publisher) = try Self.publishingReplicas(fixture)
    defer { publisher.stop() }
    for k in [1, 4, 7] {
      try b.apply(
        table: "todos", pk: "t\(k)", op: .update, transforms: ["views": ["op": "increment", "by": 5]])
    }
    try b.sync()
    try a.apply(table: "todos", pk: "t2", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    #expect(try a.sync(push: false).action == .merged)
    let indexPath = a.rootPath + "/.git/index"
    func identity() -> [Int] {
      var st = stat()
      guard lstat(indexPath, &st) == 0 else { return [] }
      return [Int(st.st_ino), st.st_mtim.tv_sec, st.st_mtim.tv_nsec]
    }
    let before = identity()
    let planned = try Self.plannedScan(a)
    #expect(planned.restricted, "\(planned.why)")
    #expect(planned.found.isEmpty)
    #expect(try a.commit().commit == nil)
    #expect(identity() == before)
    // A touch: same bytes, new stat data, refreshed by the next commit.
    let touched = a.rootPath + "/" + (try a.file("todos", "t4"))
    var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
    #expect(utimensat(AT_FDCWD, touched, &times, 0) == 0)
    #expect(try a.commit().commit == nil)
    #expect(identity() != before)
    // The entry points into the file's mapping, which must outlive it.
    let indexFile = try #require(try GitIndexFile.open(indexPath))
    let entry = try #require(indexFile.rawEntry(at: try a.file("todos", "t4")))
    var st = stat()
    #expect(lstat(touched, &st) == 0)
    #expect(withExtendedLifetime(indexFile) { entry.matches(st) })
    #expect(try git(["status", "--porcelain"], in: a.rootPath).output == "")
  }

  /// Past ``OpLogSegments/segmentBytes``, a commit seals the replica's log
  /// segment and the next op starts a new file: later commits write only
  /// the new segment, the sealed one keeps its blob, stamps keep rising
  /// across the seal, and replicas still merge every op exactly once.
  @Test func aFullLogSegmentIsSealedAndReplicasStillMergeEveryOp() throws {
    let yaml = "version: 1\ntables:\n  todos:\n    path: todos\n    columns:\n      views: counter\n"
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: yaml)
    let padding = String(repeating: "x", count: 200)
    try a.write { transaction in
      for k in 0..<6000 {
        _ = try transaction.put(
          table: "todos", pk: "t\(k)", document: ["views": 1, "note": .string(padding)])
      }
    }
    try a.sync()
    let first = a.replicaID + ".ndjson"
    let sealedBlob = try git(["rev-parse", "HEAD:.folio/ops/" + first], in: a.rootPath).output
    let last = try #require(try a.clock.lastHLC())
    // The next op goes to a new segment, stamped after every sealed one.
    #expect(a.opLogName == a.replicaID + ".1.ndjson")
    try a.apply(table: "todos", pk: "t1", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    #expect(try #require(try a.clock.lastHLC()) > last)
    let b = try fixture.clone("b")
    try b.apply(table: "todos", pk: "t1", op: .update, transforms: ["views": ["op": "increment", "by": 40]])
    try b.sync()
    try a.sync()
    try b.sync()
    for store in [a, b] {
      #expect(try store.collection("todos").findByID("t1").exec()?.value["views"] == 43)
      #expect(try git(["status", "--porcelain"], in: store.rootPath).output.isEmpty)
    }
    // The sealed segment was never written again.
    #expect(try git(["rev-parse", "HEAD:.folio/ops/" + first], in: a.rootPath).output == sealedBlob)
    let segments = try git(["ls-tree", "--name-only", "HEAD", ".folio/ops/"], in: a.rootPath).output
    #expect(segments.contains(a.replicaID + ".1.ndjson"))
    #expect(try tableFiles(a) == tableFiles(b))
  }
}
