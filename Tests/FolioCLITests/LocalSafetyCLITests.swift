import FolioTestSupport
import Foundation
import Glibc
import Testing

/// End to end: links in the store are refused and
/// named, a transaction that cannot be completed leaves reads working, and
/// a stale `.git/index.lock` is recovered when a dead Folio process left it.
@Suite struct LocalSafetyCLITests {
  @Test func symlinksAreRefusedAndNamed() throws {
    let scratch = try CLIScratch()
    let outside = try CLIScratch(yaml: nil)
    defer {
      scratch.remove()
      outside.remove()
    }
    try outside.write("secret.json", "{\"id\": \"d1\", \"secret\": true}\n")
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("apply", "todos", "a", "--op", "insert", "--columns", "{}").status == 0)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path + "/data/todos/d1.json", withDestinationPath: outside.path + "/secret.json")
    let get = try scratch.folio("get", "todos", "d1")
    #expect(get.status == 1)
    #expect(get.stderr.contains("UNSAFE_PATH") && get.stderr.contains("data/todos/d1.json"), "\(get.stderr)")
    #expect(!get.stdout.contains("secret"))
    let fsck = try scratch.folio("fsck")
    #expect(fsck.status == 1)
    #expect(fsck.stderr.contains("data/todos/d1.json is a symbolic link"), "\(fsck.stderr)")
    // The link is left out and named, as a broken file is: exit 3.
    let status = try scratch.folio("status")
    #expect(status.status == 3)
    #expect(status.stderr.contains("data/todos/d1.json"), "\(status.stderr)")
    #expect(try scratch.folio("get", "todos", "a").status == 0)
    #expect(outside.read("secret.json") == "{\"id\": \"d1\", \"secret\": true}\n")

    // A table folder that is a link stops the store at open, with its name.
    try FileManager.default.removeItem(atPath: scratch.path + "/data/todos")
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path + "/data/todos", withDestinationPath: outside.path)
    let open = try scratch.folio("get", "todos", "d1")
    #expect(open.status == 1)
    #expect(open.stderr.contains("data/todos is a symbolic link"), "\(open.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["secret.json"])
  }

  @Test func longPKIsRefusedUpFront() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let long = try scratch.folio("apply", "todos", String(repeating: "a", count: 240), "--op", "insert")
    #expect(long.status == 1)
    #expect(long.stderr.hasPrefix("error: LOCAL_CONSTRAINT: "), "\(long.stderr)")
    #expect(try scratch.folio("apply", "todos", "b", "--op", "insert").status == 0)
    #expect(try scratch.folio("fsck").status == 0)
  }

  /// A write killed after its durability point, whose redo then fails
  /// (the op log made immutable): reads go on and say why; writes fail
  /// with the cause until it is fixed.
  @Test func pendingWriteThatCannotBeCompletedLeavesReadsWorking() throws {
    guard getuid() == 0 else { return }  // chattr +i needs root
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("apply", "todos", "a", "--op", "insert", "--columns", #"{"v": 1}"#).status == 0)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    process.arguments = ["apply", "todos", "a", "--op", "update", "--columns", #"{"v": 2}"#]
    process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
    var env = ProcessInfo.processInfo.environment
    env["FOLIO_TEST_PAUSE_AT"] = "commit"
    env["FOLIO_INDEX_DAEMON"] = "off"
    process.environment = env
    try process.run()
    let marker = scratch.path + "/.git/folio/test-paused"
    eventually { FileManager.default.fileExists(atPath: marker) || !process.isRunning }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    try #require(FileManager.default.fileExists(atPath: marker), "the writer never paused at commit")
    try FileManager.default.removeItem(atPath: marker)
    let logs = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/.folio/ops")
    let log = scratch.path + "/.folio/ops/" + (try #require(logs.first))
    #expect(try FolioRunner.shell("chattr +i '\(log)'", in: scratch.path) == 0)
    defer { _ = try? FolioRunner.shell("chattr -i '\(log)'", in: scratch.path) }

    let get = try scratch.folio("get", "todos", "a")
    #expect(get.status == 0)
    #expect(get.stderr.hasPrefix("warning: "), "\(get.stderr)")
    #expect(get.stderr.contains("an interrupted write could not be completed"))
    let status = try scratch.folio("status", "--json")
    #expect(status.status == 0)
    #expect(status.stdout.contains("\"pendingWrite\""), "\(status.stdout)")
    #expect(try scratch.folio("query", "todos").status == 0)
    #expect(try scratch.folio("fsck").status == 1)
    let write = try scratch.folio("apply", "todos", "b", "--op", "insert")
    #expect(write.status == 1)
    #expect(
      write.stderr.contains("Operation not permitted") && write.stderr.contains("once that is fixed")
        && write.stderr.hasSuffix("\nTo complete it now: folio fsck\n"), "\(write.stderr)"
    )

    #expect(try FolioRunner.shell("chattr -i '\(log)'", in: scratch.path) == 0)
    let fixed = try scratch.folio("apply", "todos", "b", "--op", "insert")
    #expect(fixed.status == 0, "\(fixed.stderr)")
    #expect(fixed.stderr.isEmpty)
    #expect(try scratch.folio("get", "todos", "a").stdout.contains("\"v\": 2"))
  }

  @Test func staleIndexLockFromADeadFolioIsRecovered() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("apply", "todos", "a", "--op", "insert").status == 0)
    // Someone else's lock: named, with the fix.
    try scratch.write(".git/index.lock", "")
    let blocked = try scratch.folio("commit", "-m", "one")
    #expect(blocked.status == 1)
    #expect(blocked.stderr.contains("LOCKED"), "\(blocked.stderr)")
    #expect(blocked.stderr.contains("remove .git/index.lock if no git is running"), "\(blocked.stderr)")
    // A lock a Folio process left when it died: its pid is gone.
    let dead = Process()
    dead.executableURL = URL(fileURLWithPath: "/bin/true")
    try dead.run()
    dead.waitUntilExit()
    try FileManager.default.removeItem(atPath: scratch.path + "/.git/index.lock")
    try scratch.write(".git/folio/index.lock.owner", "\(dead.processIdentifier)\n")
    try scratch.write(".git/index.lock", "torn")
    let recovered = try scratch.folio("commit", "-m", "one")
    #expect(recovered.status == 0, "\(recovered.stderr)")
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.git/index.lock"))
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.git/folio/index.lock.owner"))
    #expect(try FolioRunner.shellOutput("git status --porcelain", in: scratch.path).output.isEmpty)
    // A live owner is not overridden.
    try scratch.write(".git/folio/index.lock.owner", "\(getpid())\n")
    try scratch.write(".git/index.lock", "")
    #expect(try scratch.folio("apply", "todos", "b", "--op", "insert").status == 0)
    #expect(try scratch.folio("commit", "-m", "two").status == 1)
  }
}
