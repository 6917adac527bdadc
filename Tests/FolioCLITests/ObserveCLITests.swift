import Folio
import FolioTestSupport
import Foundation
import Testing

/// `folio observe` and `folio query --follow`, and live queries that see
/// another process's writes.
struct ObserveCLITests {
  /// A `folio` process whose stdout is read line by line as it comes.
  final class Follower: @unchecked Sendable {
    // @unchecked: `lines` is guarded by `condition`; the rest is set once.
    let process = Process()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var reader: Thread?

    init(_ arguments: [String], in directory: String) throws {
      process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
      process.arguments = arguments
      process.currentDirectoryURL = URL(fileURLWithPath: directory)
      let stdout = Pipe()
      process.standardOutput = stdout
      process.standardError = FileHandle.nullDevice
      try process.run()
      let handle = stdout.fileHandleForReading
      let thread = Thread { [self] in
        var buffer = Data()
        while true {
          let chunk = handle.availableData
          if chunk.isEmpty { break }
          buffer.append(chunk)
          while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex...newline)
            condition.lock()
            lines.append(line)
            condition.broadcast()
            condition.unlock()
          }
        }
      }
      thread.start()
      reader = thread
    }

    /// The lines so far, once there are at least `count` (or after
    /// `stateTimeout`).
    func wait(for count: Int) -> [String] {
      let deadline = Date().addingTimeInterval(stateTimeout)
      condition.lock()
      defer { condition.unlock() }
      while lines.count < count, condition.wait(until: deadline) {}
      return lines
    }
  }

  func json(_ line: String) throws -> JSONValue { try JSONValue(parsing: line) }

  /// Whether process `pid` has the file at `path` open.
  static func hasOpen(_ pid: Int32, _ path: String) -> Bool {
    let folder = "/proc/\(pid)/fd"
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains {
      (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) == path
    }
  }

  @Test func observePrintsEachChangeAndExitsZeroOnInterrupt() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let follower = try Follower(["observe", "todos", "a"], in: scratch.path)
    let first = follower.wait(for: 1)
    try #require(first.count == 1)
    #expect(try json(first[0]) == ["initial": true, "document": .null])
    let store = try Store(at: URL(fileURLWithPath: scratch.path))
    try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["title": "milk"])
    try scratch.folio("apply", "todos", "a", "--op", "update", "--columns", #"{"title":"eggs"}"#)
    let lines = follower.wait(for: 3)
    try #require(lines.count == 3)
    let milk: JSONValue = ["id": "a", "title": "milk"]
    #expect(try json(lines[1]) == ["document": milk, "old": .null])
    #expect(try json(lines[2]) == ["document": ["id": "a", "title": "eggs"], "old": milk])
    follower.process.interrupt()
    follower.process.waitUntilExit()
    #expect(follower.process.terminationReason == .exit)
    #expect(follower.process.terminationStatus == 0)
  }

  @Test func observeWithSubscribePullsOtherReplicasChanges() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    try scratch.write(
      "a/folio.yaml", CLIScratch.yaml + "\nsync:\n  pull-every: 100ms\n")
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    let a = scratch.path + "/a"
    #expect(try FolioRunner.run(["init"], in: a).status == 0)
    #expect(try FolioRunner.shell("git remote add origin ../remote.git", in: a) == 0)
    #expect(try FolioRunner.run(["put", "todos", "t", "-"], in: a, input: #"{"views": 1}"#).status == 0)
    #expect(try FolioRunner.run(["sync"], in: a).status == 0)
    #expect(try FolioRunner.run(["clone", "remote.git", "b"], in: scratch.path).status == 0)

    let follower = try Follower(["observe", "todos", "t", "--subscribe"], in: scratch.path + "/b")
    let first = follower.wait(for: 1)
    try #require(first.count == 1)
    #expect(try json(first[0])["document"]?["views"] == 1)
    // a changes the document and pushes; b's observer sees it without a sync in b.
    #expect(
      try FolioRunner.run(
        [
          "apply", "todos", "t", "--op", "update", "--transforms",
          #"{"views": {"op": "increment", "by": 41}}"#,
        ],
        in: a
      ).status == 0)
    #expect(try FolioRunner.run(["sync"], in: a).status == 0)
    let lines = follower.wait(for: 2)
    try #require(lines.count >= 2)
    #expect(try json(lines[1])["document"]?["views"] == 42)
    follower.process.interrupt()
    follower.process.waitUntilExit()
    #expect(follower.process.terminationStatus == 0)
  }

  @Test func queryFollowPrintsResultsThenChildEvents() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    for (pk, t) in [("a", 1), ("b", 2), ("c", 3)] {
      try scratch.folio("apply", "todos", pk, "--op", "insert", "--columns", #"{"lastUpdate":\#(t)}"#)
    }
    let follower = try Follower(["query", "todos", "--limit-to-first", "2", "--follow"], in: scratch.path)
    let initial = follower.wait(for: 2)
    try #require(initial.count == 2)
    #expect(try initial.map(json) == [["id": "a", "lastUpdate": 1], ["id": "b", "lastUpdate": 2]])
    try scratch.folio("rm", "todos", "a")
    let lines = follower.wait(for: 4)
    try #require(lines.count == 4)
    #expect(
      try json(lines[2])
        == [
          "event": "child_removed", "key": "a", "prevKey": .null, "document": ["id": "a", "lastUpdate": 1],
        ])
    #expect(
      try json(lines[3])
        == ["event": "child_added", "key": "c", "prevKey": "b", "document": ["id": "c", "lastUpdate": 3]])
    follower.process.terminate()
    follower.process.waitUntilExit()
    #expect(follower.process.terminationStatus == 0)
  }

  @Test func liveQuerySeesAnotherProcess() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let store = try Store(at: URL(fileURLWithPath: scratch.path))
    let condition = NSCondition()
    nonisolated(unsafe) var seen: [Document?] = []
    let live = try store.collection("todos").findByID("a").observeLocal { document, _ in
      condition.lock()
      seen.append(document)
      condition.broadcast()
      condition.unlock()
    }
    defer { live.stop() }
    let result = try scratch.folio("apply", "todos", "a", "--op", "upsert", "--columns", #"{"title":"far"}"#)
    #expect(result.status == 0)
    condition.lock()
    let deadline = Date().addingTimeInterval(stateTimeout)
    while seen.count < 2, condition.wait(until: deadline) {}
    let got = seen
    condition.unlock()
    try #require(got.count == 2)
    #expect(got[0] == nil)
    #expect(got[1]?["title"] == "far")
  }

  @Test func aWriterKilledMidCommitIsSeenOnceTheJournalIsRedone() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let follower = try Follower(["observe", "todos", "a"], in: scratch.path)
    try #require(follower.wait(for: 1).count == 1)
    // The writer stops with its document in place, before the applied stamp
    // and the journal's clearing, and is killed there.
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    writer.arguments = ["apply", "todos", "a", "--op", "upsert", "--columns", #"{"title":"far"}"#]
    writer.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
    writer.environment = ProcessInfo.processInfo.environment.merging(["FOLIO_TEST_PAUSE_AT": "commit"]) { $1 }
    writer.standardOutput = FileHandle.nullDevice
    writer.standardError = FileHandle.nullDevice
    try writer.run()
    let marker = scratch.path + "/.git/folio/test-paused"
    eventually { FileManager.default.fileExists(atPath: marker) || !writer.isRunning }
    try #require(FileManager.default.fileExists(atPath: marker), "the writer never paused at commit")
    // The document is in place, but not delivered while the transaction
    // may be half done: the observer holds it back until the writer stamps
    // it applied, and after a second goes to redo the journal under the
    // store lock, which the writer holds. Its lock file open shows it has
    // come that far without delivering, and delivers nothing before the
    // writer has gone...
    #expect(
      eventually { Self.hasOpen(follower.process.processIdentifier, scratch.path + "/.git/folio/lock") })
    let onDisk = try String(contentsOfFile: scratch.path + "/data/todos/a.json", encoding: .utf8)
    #expect(onDisk.contains("far"))
    #expect(follower.wait(for: 1).count == 1)
    kill(writer.processIdentifier, SIGKILL)
    writer.waitUntilExit()
    // ...then once, when the observer has redone the journal.
    let lines = follower.wait(for: 2)
    try #require(lines.count == 2)
    #expect(try json(lines[1]) == ["document": ["id": "a", "title": "far"], "old": .null])
    // A fence: another writer's change after the redo. A line too many for
    // the redo comes before the fence's.
    let fence = try scratch.folio("apply", "todos", "a", "--op", "update", "--columns", #"{"title":"fence"}"#)
    #expect(fence.status == 0, "\(fence.stderr)")
    let fenced = follower.wait(for: 3)
    try #require(fenced.count == 3)
    #expect(
      try json(fenced[2]) == [
        "document": ["id": "a", "title": "fence"], "old": ["id": "a", "title": "far"],
      ])
    let status = try scratch.folio("get", "todos", "a")
    #expect(status.status == 0)
    follower.process.interrupt()
    follower.process.waitUntilExit()
  }

  @Test func observeRejectsOptionsThatDoNotApply() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let result = try scratch.folio("observe", "todos", "--format", "csv")
    #expect(result.status == 64)
    #expect(result.stderr.contains("--format"))
    let help = try scratch.folio("observe", "--help")
    #expect(help.status == 0)
    #expect(help.stdout.contains("folio observe TABLE PK"))
  }
}
