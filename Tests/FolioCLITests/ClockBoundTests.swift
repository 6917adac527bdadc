import FolioTestSupport
import Foundation
import Testing

/// A remote replica whose op log carries stamps from the future (or stamps
/// that do not parse), built as an attacker would: a plain git clone, an op
/// log line written by hand, `git commit`, `git push`. Whatever route brings
/// it in (`folio sync`, plain `git pull`, `folio clone`) refuses it, the
/// victim's clock stays put, and the store stays usable.
@Suite struct ClockBoundTests {
  typealias Sandbox = GitPullTests.Sandbox

  /// A wall time past the default 24-hour bound: the largest the format
  /// holds, the year 2255, and two days from now.
  static let futureWalls: [Int64] = [
    9_999_999_999_999, 9_000_000_000_000, Int64(Date().timeIntervalSince1970 * 1000) + 2 * 86_400_000,
  ]

  /// r0 seeds `todos/t` and pushes; r1 is a plain clone with `folio init`;
  /// `evil` is a plain clone where the attacker commits an op log line
  /// stamped `hlc` (with the document changed to match) and pushes it.
  static func attack(_ box: Sandbox, hlc: String) throws -> String {
    try box.seedAndClone(["t": #"{"title": "honest", "views": 1}"#])
    #expect(try FolioRunner.shell("git clone -q -b main remote.git evil", in: box.root.path) == 0)
    let honest = try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/evil").output
    let line = #"{"hlc":"\#(hlc)","op":"update","pk":"t","set":{"title":"pwned"},"table":"todos"}"#
    try box.root.write("evil/.folio/ops/evil.ndjson", line + "\n")
    try box.root.write(
      "evil/todos/t.json", "{\n  \"id\": \"t\",\n  \"title\": \"pwned\",\n  \"views\": 1\n}\n")
    #expect(try box.git("add -A", in: "evil") == 0)
    #expect(try box.git("commit -q -m future", in: "evil") == 0)
    #expect(try box.git("push -q origin main", in: "evil") == 0)
    return honest.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Puts the remote back to an honest history: the attacker's commit is
  /// gone, and an honest edit from r0 follows.
  static func restoreHonestRemote(_ box: Sandbox, honest: String) throws {
    #expect(try box.git("push -q -f origin \(honest):main", in: "evil") == 0)
    try box.folio(["put", "todos", "u", "-"], in: "r0", input: #"{"title": "later"}"#)
    try box.folio(["sync"], in: "r0")
  }

  /// `get`, `status` and `fsck` work, and a new local write is stamped
  /// within a minute of real time, not after the attacker's stamp.
  static func expectUsable(_ box: Sandbox, in replica: String) throws {
    #expect(try box.folio(["get", "todos", "t"], in: replica).stdout.contains("honest"))
    try box.folio(["status"], in: replica)
    try box.folio(["fsck"], in: replica)
    try box.folio(["put", "todos", "mine", "-"], in: replica, input: #"{"n": 1}"#)
    let log = try box.folio(["log", "todos"], in: replica).stdout
    let last = try #require(log.split(separator: "\n").last)
    let stamp = try #require(last.firstMatch(of: #/"hlc":"(\d{13})-/#)).output.1
    let wall = try #require(Int64(stamp))
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    #expect(abs(wall - now) < 60_000, "a local stamp follows real time, not the remote's: \(last)")
  }

  @Test(arguments: futureWalls) func folioSyncRefusesAnOpFromTheFuture(wall: Int64) throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    let hlc = String(format: "%013lld", wall) + "-9999-evil"
    let honest = try Self.attack(box, hlc: hlc)
    let before = try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/r1").output

    let sync = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(sync.status == 1)
    #expect(
      sync.stderr.contains(
        ".folio/ops/evil.ndjson:1:1: error: op \(hlc) from replica 'evil' (update todos/t)"),
      "\(sync.stderr)")
    #expect(sync.stderr.contains("hours ahead of this machine's clock"), "\(sync.stderr)")
    #expect(sync.stderr.contains("max-clock-skew"), "the message says how to accept such stamps")
    #expect(try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/r1").output == before)
    #expect(box.file("r1/.git/folio/clock") == nil, "the local clock did not move")
    try Self.expectUsable(box, in: "r1")

    try Self.restoreHonestRemote(box, honest: honest)
    try box.folio(["sync"], in: "r1")
    #expect(box.file("r1/todos/u.json")?.contains("later") == true)
    #expect(box.file("r1/todos/t.json")?.contains("honest") == true)
  }

  @Test func aBoundRaisedInFolioYAMLAcceptsTheOp() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    let wall = Int64(Date().timeIntervalSince1970 * 1000) + 2 * 86_400_000
    _ = try Self.attack(box, hlc: String(format: "%013lld", wall) + "-0000-evil")
    try box.root.write("r1/folio.yaml", GitPullTests.yaml + "\nsync:\n  max-clock-skew: 72h\n")
    try box.folio(["commit", "-m", "trust a skewed replica"], in: "r1")
    try box.folio(["sync"], in: "r1")
    #expect(box.file("r1/todos/t.json")?.contains("pwned") == true)
  }

  @Test func aMalformedStampIsAPositionedErrorAndTheLocalLogStaysReadable() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    _ = try Self.attack(box, hlc: "99999999999999-9999-evil")
    let sync = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(sync.status == 1)
    #expect(
      sync.stderr.contains(".folio/ops/evil.ndjson:1:1: error: op log entry: missing or malformed 'hlc'"),
      "\(sync.stderr)")
    try Self.expectUsable(box, in: "r1")
  }

  /// git merges each replica's op log without the driver (only one side
  /// changed it): the post-merge hook finds the stamp and undoes the pull.
  @Test func plainGitPullIsUndoneByThePostMergeHook() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    _ = try Self.attack(box, hlc: "9000000000000-0000-evil")
    // A local commit too, so the pull is a real merge in one case...
    try box.folio(["put", "todos", "local", "-"], in: "r1", input: #"{"n": 1}"#)
    try box.folio(["commit", "-m", "local"], in: "r1")
    let before = try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/r1").output
    let pull = try FolioRunner.shellOutput(
      "git pull --no-rebase --no-edit origin main", in: box.root.path + "/r1")
    #expect(pull.output.contains("hours ahead of this machine's clock"), "\(pull.output)")
    #expect(pull.output.contains("the pull was undone"), "\(pull.output)")
    #expect(try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/r1").output == before)
    #expect(box.file("r1/todos/t.json")?.contains("honest") == true)
    #expect(box.file("r1/.folio/ops/evil.ndjson") == nil)
    #expect(try FolioRunner.shellOutput("git status --porcelain", in: box.root.path + "/r1").output.isEmpty)
    try Self.expectUsable(box, in: "r1")
  }

  @Test func plainGitPullFastForwardIsUndoneToo() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    _ = try Self.attack(box, hlc: "9000000000000-0000-evil")
    let before = try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/r1").output
    let pull = try FolioRunner.shellOutput("git pull --ff-only origin main", in: box.root.path + "/r1")
    // git runs post-merge after a fast-forward pull as well.
    #expect(pull.output.contains("hours ahead of this machine's clock"), "\(pull.output)")
    #expect(try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/r1").output == before)
    #expect(box.file("r1/todos/t.json")?.contains("honest") == true)
  }

  @Test func folioCloneRefusesAndLeavesNothing() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    _ = try Self.attack(box, hlc: "9000000000000-0000-evil")
    let clone = try FolioRunner.run(["clone", box.remote, "copy"], in: box.root.path)
    #expect(clone.status == 1)
    #expect(clone.stderr.contains("hours ahead of this machine's clock"), "\(clone.stderr)")
    #expect(!FileManager.default.fileExists(atPath: box.root.path + "/copy"))
  }
}
