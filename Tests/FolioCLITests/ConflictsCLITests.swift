import Folio
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// `folio conflicts` end to end: a plain `git pull` (driver + post-merge
/// hook) and `folio sync` record the same conflict, the CLI lists it, and a
/// resolution on one replica closes it on the others; with three replicas
/// too; and a live observation hears of records a pull brings and of
/// resolutions made by another process.
@Suite struct ConflictsCLITests {
  typealias Sandbox = GitPullTests.Sandbox

  func title(_ text: String) -> [String] {
    ["apply", "todos", "t", "--op", "update", "--columns", #"{"title": "\#(text)"}"#]
  }

  @Test func gitPullAndSyncListTheSameConflictAndResolutionClosesIt() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "title": "start"}"#])
    try box.folio(title("from r0"), in: "r0")
    try box.folio(
      ["apply", "todos", "t", "--op", "update", "--transforms", #"{"views": {"op": "increment", "by": 1}}"#],
      in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    waitForNextMillisecond()  // r1's assignment is the later one
    try box.folio(title("from r1"), in: "r1")
    try box.folio(
      ["apply", "todos", "t", "--op", "update", "--transforms", #"{"views": {"op": "increment", "by": 2}}"#],
      in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    try box.folio(["sync", "--no-push"], in: "twin")
    try box.expectConcludedLikeTwin()

    let listed = try box.folio(["conflicts", "--json"], in: "r1").stdout
    #expect(
      listed == (try box.folio(["conflicts"], in: "twin").stdout), "piped output is NDJSON, and the same")
    let lines = listed.split(separator: "\n")
    try #require(lines.count == 1, "one conflict: \(listed)")
    #expect(lines[0].contains(#""path":"title""#))
    #expect(lines[0].contains(#""loser":{"replica":"#) && lines[0].contains(#""value":"from r0""#))
    #expect(lines[0].contains(#""value":"from r1""#))
    #expect(!listed.contains("views"), "counters never conflict")
    #expect(try box.folio(["status"], in: "r1").stdout.contains("todos: 1 open conflict(s)"))
    #expect(try box.folio(["status", "--json"], in: "r1").stdout.contains(#""conflicts":1"#))

    // r0 gets the record by pulling too, then settles it; r1 sees it closed.
    #expect(try box.git("push -q origin main", in: "r1") == 0)
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r0") == 0)
    #expect(try box.folio(["conflicts", "todos"], in: "r0").stdout == listed)
    let resolved = try box.folio(["conflicts", "resolve", "todos", "t", "title", "--take-other"], in: "r0")
    #expect(resolved.stdout.contains("from r0"))
    #expect(try box.folio(["conflicts"], in: "r0").stdout.isEmpty)
    try box.folio(["sync"], in: "r0")
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    #expect(try box.folio(["conflicts"], in: "r1").stdout.isEmpty)
    #expect(box.file("r1/todos/t.json")?.contains("\"title\": \"from r0\"") == true)

    // Usage errors.
    let usage = try FolioRunner.run(
      ["conflicts", "resolve", "todos", "t", "title"], in: box.root.path + "/r1")
    #expect(usage.status == 64)
    let missing = try FolioRunner.run(
      ["conflicts", "resolve", "todos", "t", "title", "--keep"], in: box.root.path + "/r1")
    #expect(missing.status == 1 && missing.stderr.contains("no open conflict"))
  }

  /// Events collected from an observation, waited on by the test.
  final class Events: Sendable {
    let list = Mutex<[([Conflict], ConflictListEvent)]>([])
    var count: Int { list.withLock { $0.count } }
    subscript(_ index: Int) -> ([Conflict], ConflictListEvent) { list.withLock { $0[index] } }

    func wait(for count: Int) -> Bool { eventually { self.count >= count } }
  }

  @Test func observationHearsOfAPullAndOfAnotherProcess() async throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "title": "start"}"#])
    try box.folio(title("from r0"), in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    waitForNextMillisecond()  // r1's assignment is the later one
    try box.folio(title("from r1"), in: "r1")
    try box.folio(["commit"], in: "r1")

    let store = try Store(at: URL(fileURLWithPath: box.root.path + "/r1"))
    let events = Events()
    let queue = DispatchQueue(label: "test.conflicts")
    let observation = try store.observeConflicts(table: "todos", deliverOn: queue) { conflicts, event in
      events.list.withLock { $0.append((conflicts, event)) }
    }
    defer { observation.stop() }
    #expect(events.wait(for: 1))
    #expect(events[0].1.isInitial && events[0].0.isEmpty)

    // git writes the merge, its driver and hook record the conflict.
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    #expect(events.wait(for: 2))
    let opened = events[1]
    #expect(
      !opened.1.isInitial && opened.0.count == 1 && opened.1.opened == opened.0 && opened.1.closed.isEmpty)
    #expect(opened.0.first?.losingValue == "from r0")

    // Another process settles it.
    try box.folio(["conflicts", "resolve", "todos", "t", "title", "--keep"], in: "r1")
    #expect(events.wait(for: 3))
    #expect(events[2].0.isEmpty && events[2].1.closed == opened.0)
    // A fence: a record for another document, as a fetch would bring it.
    // The watcher hears of it after everything the resolution wrote, and
    // reads the list again only after that: an event too many for the
    // resolution comes before the fence's, or, read together with it,
    // makes the fence's event more than the fence's record opening.
    var fence = try #require(opened.0.first)
    fence.pk = "fence"
    let fencePath = box.root.path + "/r1/.folio/conflicts/fence.json"
    Save.tempThenRename(fencePath, String(decoding: fence.json.canonicalBytes(), as: UTF8.self))
    #expect(events.wait(for: 4))
    #expect(events.count == 4, "one event per change: \((0..<events.count).map { events[$0].1 })")
    #expect(events[3].0 == [fence] && events[3].1.opened == [fence] && events[3].1.closed.isEmpty)
    observation.stop()
    #expect(observation.isStopped)
    try FileManager.default.removeItem(atPath: fencePath)

    // The async form: the initial list, then it ends with the loop.
    var first: (Int, Bool)?
    for try await (conflicts, event) in try store.conflictChanges() {
      first = (conflicts.count, event.isInitial)
      break
    }
    #expect(first.map { $0 == (0, true) } == true)
  }

  @Test func threeReplicasThroughGitPullListTheSameConflicts() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "title": "start"}"#])
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r2", in: box.root.path) == 0)
    try box.folio(["init"], in: "r2")
    for replica in ["r0", "r1", "r2"] {
      try box.folio(title("from " + replica), in: replica)
      try box.folio(["commit"], in: replica)
      waitForNextMillisecond()
    }
    // Each replica pulls and pushes in turn, twice round: merges happen in
    // different places, by plain git.
    for replica in ["r0", "r1", "r2", "r0", "r1", "r2"] {
      #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: replica) == 0)
      #expect(try box.git("push -q origin main", in: replica) == 0)
    }
    let lists = try ["r0", "r1", "r2"].map { try box.folio(["conflicts", "--json"], in: $0).stdout }
    #expect(lists[0].split(separator: "\n").count == 2, "\(lists[0])")
    #expect(lists[0].contains(#""value":"from r0""#) && lists[0].contains(#""value":"from r1""#))
    #expect(lists[1] == lists[0] && lists[2] == lists[0])
    let records = try ["r0", "r1", "r2"].map {
      try FileManager.default.contentsOfDirectory(atPath: box.root.path + "/\($0)/.folio/conflicts").sorted()
    }
    #expect(records[1] == records[0] && records[2] == records[0])
    #expect(try box.folio(["fsck"], in: "r2").status == 0)
  }
}
