import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

/// Untrusted input that used to cost unbounded time, stack or memory: huge
/// set operations from a remote, oversized documents in a merge, deeply
/// nested `--where` text. Each now finishes quickly or fails with a clear
/// error. The time limits are hang guards (the quadratic code took minutes),
/// not speed assertions.
@Suite struct BoundedWorkTests {
  typealias Sandbox = GitPullTests.Sandbox

  /// A remote replica unions 200k members into a set column while the
  /// local one unions another: `folio sync` and plain `git pull` (through
  /// the driver) both replay the two, keeping every member.
  @Test(.timeLimit(.minutes(3))) func aRemoteUnionOf200kValuesMergesInLinearTime() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"tags": ["seed"], "views": 0}"#])
    let remote = try Store(at: URL(fileURLWithPath: box.root.path + "/r0"))
    let values = (0..<200_000).map { JSONValue.string("v\($0)") }
    try remote.apply(
      table: "todos", pk: "t", op: .update, transforms: ["tags": .arrayUnion(values)])
    try box.folio(["sync"], in: "r0")

    try box.folio(
      [
        "apply", "todos", "t", "--op", "update", "--transforms",
        #"{"tags": {"op": "arrayUnion", "values": ["x"]}}"#,
      ],
      in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    try box.folio(["sync", "--no-push"], in: "r1")
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "twin") == 0)
    for replica in ["r1", "twin"] {
      let document = try JSONValue(parsing: Array(try #require(box.file("\(replica)/todos/t.json")).utf8))
      let tags = try #require(document["tags"]?.arrayValue)
      #expect(tags.count == 200_002, "\(replica)")
      #expect(Set(tags).count == tags.count, "\(replica): no member twice")
    }
    #expect(box.file("r1/todos/t.json") == box.file("twin/todos/t.json"))
  }

  /// A set column edited by hand from 200k members to 200k others: the
  /// diff into arrayRemove + arrayUnion is linear too.
  @Test(.timeLimit(.minutes(2))) func aSetDiffOf200kMembersIsLinear() throws {
    let old = JSONValue.array((0..<200_000).map { .string("a\($0)") })
    let new = JSONValue.array((100_000..<300_000).map { .string("a\($0)") })
    let mutation = Mutation.diff(from: ["tags": old], to: ["tags": new], kinds: { _ in .set })
    #expect(mutation.transforms.count == 2)
    #expect(mutation.assignments.isEmpty)
  }

  /// A 17 MiB document and a 34 MiB op-log line, as an older build (or a
  /// plain `git commit`) left them: `folio commit` reports the edit rather
  /// than record it, a merge keeps the document as each side has it and
  /// goes on for everything else, `fsck` names it, and `folio rm` clears it.
  @Test func anOversizedDocumentLeavesSyncWorkingForEverythingElse() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"title": "a"}"#, "u": #"{"title": "u"}"#])
    let big = String(repeating: "x", count: 17 << 20)
    try box.root.write("r0/todos/t.json", "{\"id\": \"t\", \"title\": \"\(big)\"}\n")
    let commit = try FolioRunner.run(["commit", "-m", "big"], in: box.root.path + "/r0")
    #expect(commit.stderr.contains("todos/t.json:1:1: warning: left out: "), "\(commit.stderr.prefix(400))")
    #expect(commit.status == 3)
    #expect(commit.stderr.contains("more than the store's limit"), "\(commit.stderr.prefix(400))")
    // As an older build wrote it: the document and an op line of twice its
    // size (past the 33 MiB a merge reads), committed with plain git.
    let op = try #require(
      FolioRunner.shellOutput("cat .folio/ops/*.ndjson", in: box.root.path + "/r0").output
        .split(separator: "\n").last { $0.contains(#""pk":"t""#) })
    let line = op.replacingOccurrences(of: #""title":"a""#, with: #""title":""# + big + big + #"""#)
    #expect(line.utf8.count > 33 << 20)
    try box.root.write("line.txt", String(line) + "\n")
    #expect(
      try FolioRunner.shell(
        "f=$(ls .folio/ops/*.ndjson) && cat ../line.txt >> \"$f\" && git add -A && git -c user.name=o -c user.email=o@o commit -q -m older && git push -q origin main",
        in: box.root.path + "/r0") == 0)
    let fsck = try FolioRunner.run(["fsck"], in: box.root.path + "/r0")
    #expect(
      fsck.status == 1 && (fsck.stdout + fsck.stderr).contains("todos/t.json:1:1"),
      "\(fsck.stderr.prefix(400))")
    // r1 changed both documents meanwhile.
    try box.folio(["put", "todos", "t", "-"], in: "r1", input: #"{"title": "b"}"#)
    try box.folio(["put", "todos", "u", "-"], in: "r1", input: #"{"title": "u2"}"#)
    let sync = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(sync.status == 0, "\(sync.stderr.prefix(600))")
    #expect(
      sync.stderr.contains("warning: todos/t.json is past the size limit"), "\(sync.stderr.prefix(600))")
    #expect(box.file("r1/todos/t.json")?.contains("\"b\"") == true)
    #expect(box.file("r1/todos/u.json")?.contains("\"u2\"") == true)
    #expect(try FolioRunner.run(["compact"], in: box.root.path + "/r1").status == 0)
    // r0 fast-forwards to r1's merge, which kept r1's t; rm clears t everywhere.
    let back = try FolioRunner.run(["sync"], in: box.root.path + "/r0")
    #expect(back.status == 0, "\(back.stderr.prefix(600))")
    #expect(box.file("r0/todos/u.json")?.contains("\"u2\"") == true)
    #expect(box.file("r0/todos/t.json")?.contains("\"b\"") == true)
    try box.folio(["rm", "todos", "t"], in: "r0")
    #expect(try FolioRunner.run(["sync"], in: box.root.path + "/r0").status == 0)
    #expect(try FolioRunner.run(["sync"], in: box.root.path + "/r1").status == 0)
    #expect(box.file("r0/todos/t.json") == nil && box.file("r1/todos/t.json") == nil)
    #expect(try FolioRunner.run(["fsck"], in: box.root.path + "/r0").status == 0)
  }
}

/// Hostile `--where` text and the CLI's own output rules.
@Suite struct HostileArgumentsCLITests {
  func seeded(_ count: Int = 3) throws -> CLIScratch {
    let scratch = try CLIScratch()
    #expect(try scratch.folio("init").status == 0)
    let rows = (0..<count).map {
      #"{"id": "k\#($0)", "n": \#($0), "title": "row \#($0) \#(String(repeating: "padded ", count: 30))"}"#
    }
    try scratch.write("rows.ndjson", rows.joined(separator: "\n") + "\n")
    #expect(try scratch.folio("import", "todos", "rows.ndjson").status == 0)
    return scratch
  }

  /// 20k-deep texts, by index (the texts themselves would flood the log).
  static let nestedTexts = [
    String(repeating: "(", count: 20_000) + "n == 1" + String(repeating: ")", count: 20_000),
    String(repeating: "!", count: 20_000) + "exists(n)",
    "n in " + String(repeating: "[", count: 20_000),
  ]

  @Test(arguments: 0..<3) func deeplyNestedWhereIsAnErrorNotACrash(_ index: Int) throws {
    let scratch = try seeded()
    defer { scratch.remove() }
    let result = try scratch.folio("query", "todos", "--where", Self.nestedTexts[index])
    #expect(result.status == 64, "exit \(result.status): \(result.stderr.prefix(300))")
    #expect(result.stderr.hasPrefix("error: --where:1:"), "\(result.stderr.prefix(300))")
    #expect(result.stderr.contains("nests deeper than 512 levels"), "\(result.stderr.prefix(300))")
  }

  @Test func aLongChainOfTermsIsEvaluated() throws {
    let scratch = try seeded()
    defer { scratch.remove() }
    // 10k terms: one argument may hold 128 KiB.
    let text = Array(repeating: "n>=1", count: 10_000).joined(separator: "&&")
    let result = try scratch.folio("query", "todos", "--where", text, "--count")
    #expect(result.status == 0, "\(result.stderr.prefix(300))")
    #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
  }

  @Test(arguments: [["get", "todos", "k1"], ["query", "todos"], ["log", "todos"], ["export", "todos"]])
  func aFailedWriteToStdoutExitsOne(_ arguments: [String]) throws {
    let scratch = try seeded()
    defer { scratch.remove() }
    let folio = FolioRunner.binary
    let result = try FolioRunner.shellOutput(
      "(\(folio) \(arguments.joined(separator: " ")) >/dev/full; echo \"exit=$?\")", in: scratch.path)
    #expect(result.output.contains("exit=1"), "\(result.output)")
    #expect(result.output.contains("No space left on device"), "\(result.output)")
  }

  @Test(arguments: [["query", "todos"], ["log", "todos"], ["export", "todos"]])
  func aClosedPipeIsAQuietSuccess(_ arguments: [String]) throws {
    let scratch = try seeded(1000)
    defer { scratch.remove() }
    let folio = FolioRunner.binary
    let result = try FolioRunner.shellOutput(
      "bash -c 'set -o pipefail; \(folio) \(arguments.joined(separator: " ")) 2>err | head -c 10 >/dev/null; echo \"exit=$?\"'",
      in: scratch.path)
    #expect(result.output.contains("exit=0"), "\(result.output)")
    #expect(scratch.read("err") == "", "nothing on stderr: \(scratch.read("err") ?? "")")
  }

  @Test func exportWritesIntoAFIFOAndDevicesWithoutReplacingThem() throws {
    let scratch = try seeded()
    defer { scratch.remove() }
    #expect(try FolioRunner.shell("mkfifo pipe", in: scratch.path) == 0)
    let folio = FolioRunner.binary
    let fifo = try FolioRunner.shellOutput(
      "cat pipe > received & \(folio) export todos -o pipe; echo \"exit=$?\"; wait", in: scratch.path)
    #expect(fifo.output.contains("exit=0"), "\(fifo.output)")
    #expect(scratch.read("received")?.split(separator: "\n").count == 3)
    var st = stat()
    #expect(lstat(scratch.path + "/pipe", &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO, "still a FIFO")

    let stdout = try FolioRunner.shellOutput("\(folio) export todos -o /dev/stdout | wc -l", in: scratch.path)
    #expect(stdout.output.trimmingCharacters(in: .whitespacesAndNewlines) == "3", "\(stdout.output)")
    #expect(try scratch.folio("export", "todos", "-o", "/dev/null").status == 0)
    #expect(lstat("/dev/null", &st) == 0 && (st.st_mode & S_IFMT) == S_IFCHR)

    // A regular file still gets temp-and-rename, through a symlink as cp.
    #expect(try FolioRunner.shell("touch real && ln -s real link", in: scratch.path) == 0)
    #expect(try scratch.folio("export", "todos", "-o", "link").status == 0)
    #expect(lstat(scratch.path + "/link", &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK, "the link stays")
    #expect(scratch.read("real")?.split(separator: "\n").count == 3)
  }

  @Test func statusOnADetachedHeadSaysSo() throws {
    let scratch = try seeded()
    defer { scratch.remove() }
    #expect(try FolioRunner.shell("git checkout -q --detach HEAD", in: scratch.path) == 0)
    let head = try FolioRunner.shellOutput("git rev-parse --short=12 HEAD", in: scratch.path).output
    let status = try scratch.folio("status")
    #expect(status.status == 0)
    #expect(
      status.stdout.hasPrefix("HEAD detached at \(head.trimmingCharacters(in: .whitespacesAndNewlines))"),
      "\(status.stdout)")
  }
}
