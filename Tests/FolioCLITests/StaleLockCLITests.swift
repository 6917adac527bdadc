import Folio
import FolioTestSupport
import Foundation
import Testing

/// Ref and config locks (`refs/heads/main.lock`, `HEAD.lock`,
/// `config.lock`, …) that a Folio process killed mid-write left are
/// cleared by the next write; a lock anyone alive may hold is kept and
/// reported as `LOCKED`, naming the file.
struct StaleLockCLITests {
  /// A pid that is certainly gone: a process that ran and was reaped.
  static func deadPID() throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/true")
    try process.run()
    process.waitUntilExit()
    return process.processIdentifier
  }

  /// A replica `r1` of a remote, with a change to sync.
  func replica() throws -> GitPullTests.Sandbox {
    let box = try GitPullTests.Sandbox()
    try box.seedAndClone(["t": #"{"views": 1}"#])
    try box.folio(
      ["apply", "todos", "t", "--op", "update", "--transforms", #"{"views": {"op": "increment", "by": 1}}"#],
      in: "r1")
    return box
  }

  /// Leaves `lock` as a Folio process `pid` killed while writing it would:
  /// its writer record first, then the lock.
  func leave(_ lock: String, writer pid: Int32, in box: GitPullTests.Sandbox) throws {
    let git = box.root.path + "/r1/.git"
    try FileManager.default.createDirectory(atPath: git + "/folio/writers", withIntermediateDirectories: true)
    try Data().write(to: URL(fileURLWithPath: git + "/folio/writers/\(pid)"))
    try FileManager.default.createDirectory(
      atPath: (git + "/" + lock as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data("0000000000000000000000000000000000000000\n".utf8).write(
      to: URL(fileURLWithPath: git + "/" + lock))
  }

  @Test(arguments: [
    "refs/heads/main.lock", "HEAD.lock", "config.lock", "refs/remotes/origin/main.lock", "packed-refs.lock",
  ])
  func aLockADeadFolioLeftIsCleared(lock: String) throws {
    let box = try replica()
    defer { box.root.remove() }
    try leave(lock, writer: try Self.deadPID(), in: box)
    let sync = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(sync.status == 0, "\(sync.stderr)")
    #expect(!FileManager.default.fileExists(atPath: box.root.path + "/r1/.git/" + lock))
    #expect(try FolioRunner.run(["fsck"], in: box.root.path + "/r1").status == 0)
    let pushed = try FolioRunner.shellOutput("git log -1 --format=%s origin/main", in: box.root.path + "/r1")
    #expect(pushed.status == 0)
  }

  @Test func aLockAnyoneAliveMayHoldIsKeptAndReported() throws {
    let box = try replica()
    defer { box.root.remove() }
    // A live Folio writer (its record names a live process) began before the lock.
    let sleeper = Process()
    sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
    sleeper.arguments = ["600"]
    try sleeper.run()
    defer {
      // Foundation's terminate() can miss a process on Linux; kill(2) does not.
      kill(sleeper.processIdentifier, SIGKILL)
      sleeper.waitUntilExit()
    }
    try leave("refs/heads/main.lock", writer: sleeper.processIdentifier, in: box)
    let sync = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(sync.status == 1)
    #expect(sync.stderr.contains("LOCKED") && sync.stderr.contains("main.lock"), "\(sync.stderr)")
    #expect(sync.stderr.contains("remove the .lock file"), "\(sync.stderr)")
    #expect(FileManager.default.fileExists(atPath: box.root.path + "/r1/.git/refs/heads/main.lock"))
    // git's own lock, with no Folio record at all: kept too.
    try FileManager.default.removeItem(atPath: box.root.path + "/r1/.git/folio/writers")
    let again = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(again.status == 1 && again.stderr.contains("LOCKED"), "\(again.stderr)")
    #expect(FileManager.default.fileExists(atPath: box.root.path + "/r1/.git/refs/heads/main.lock"))
  }
}
