import FolioTestSupport
import Foundation
import Testing

/// `folio sync` tells git's failures apart by their cause, each with its
/// own fix, against real servers on 127.0.0.1: a ref another git holds
/// locked, a server setting that refuses, a URL with no repository, and a
/// server that is not there. None of them is "check your network" unless
/// it is the network.
@Suite struct GitFailureCLITests {
  /// Replica `a` of a bare `remote.git`, synced once.
  private func replica() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: nil)
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    try scratch.write("a/folio.yaml", GitPullTests.yaml)
    #expect(try FolioRunner.run(["init"], in: scratch.path + "/a").status == 0)
    #expect(
      try FolioRunner.shell(
        "git remote add origin file://\(scratch.path)/remote.git", in: scratch.path + "/a") == 0)
    try scratch.write("a/todos/t.json", #"{"id": "t", "views": 1}"#)
    let first = try FolioRunner.run(["sync"], in: scratch.path + "/a")
    #expect(first.status == 0, "\(first.stderr)")
    return scratch
  }

  @Test func aRefLockIsNamedWithItsFileNotTheNetwork() throws {
    let scratch = try replica()
    defer { scratch.remove() }
    // What a git killed by kill -9 leaves: its lock on the incoming ref.
    let lock = scratch.path + "/a/.git/refs/folio/incoming/origin/main.lock"
    try FileManager.default.createDirectory(
      atPath: (lock as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try scratch.write("a/.git/refs/folio/incoming/origin/main.lock", "")
    let locked = try FolioRunner.run(["sync"], in: scratch.path + "/a")
    #expect(locked.status == 1)
    #expect(
      locked.stderr.hasPrefix(
        "error: LOCKED: another git process is updating refs/folio/incoming/origin/main in this repository"),
      "\(locked.stderr)")
    #expect(locked.stderr.contains("remove the 'refs/folio/incoming/origin/main.lock' file git names"))
    #expect(!locked.stderr.contains("check the URL and your network"))
    try FileManager.default.removeItem(atPath: lock)
    #expect(try FolioRunner.run(["sync"], in: scratch.path + "/a").status == 0)
  }

  @Test func aServerSettingThatRefusesSaysWhatToChange() throws {
    let scratch = try replica()
    defer { scratch.remove() }
    // A remote with a work tree and the branch checked out refuses pushes.
    #expect(try FolioRunner.shell("git clone -q -b main remote.git checkout", in: scratch.path) == 0)
    let daemon = try GitDaemon(base: scratch.path)
    defer { daemon.stop() }
    #expect(
      try FolioRunner.shell("git remote set-url origin \(daemon.url("checkout"))", in: scratch.path + "/a")
        == 0)
    try scratch.write("a/todos/u.json", #"{"id": "u", "views": 2}"#)
    let refused = try FolioRunner.run(["sync"], in: scratch.path + "/a")
    #expect(refused.status == 1)
    #expect(
      refused.stderr.hasPrefix("error: PUSH_REJECTED: remote 'origin' refused the push"), "\(refused.stderr)")
    #expect(refused.stderr.contains("receive.denyCurrentBranch=updateInstead"), "\(refused.stderr)")
  }

  @Test func noRepositoryAtTheURLAndNoServerAreToldApart() throws {
    let scratch = try replica()
    defer { scratch.remove() }
    let daemon = try GitDaemon(base: scratch.path)
    defer { daemon.stop() }
    #expect(
      try FolioRunner.shell("git remote set-url origin \(daemon.url("missing.git"))", in: scratch.path + "/a")
        == 0)
    let missing = try FolioRunner.run(["sync"], in: scratch.path + "/a")
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("no git repository at remote 'origin'"), "\(missing.stderr)")
    #expect(missing.stderr.contains("check the URL (git remote -v)"), "\(missing.stderr)")
    // The same server, stopped: nothing listens on the port.
    let url = daemon.url("remote.git")
    daemon.stop()
    #expect(try FolioRunner.shell("git remote set-url origin \(url)", in: scratch.path + "/a") == 0)
    let gone = try FolioRunner.run(["sync"], in: scratch.path + "/a")
    #expect(gone.status == 1)
    #expect(gone.stderr.contains("cannot reach remote 'origin'"), "\(gone.stderr)")
    #expect(gone.stderr.contains("check the URL and your network"), "\(gone.stderr)")
  }
}
