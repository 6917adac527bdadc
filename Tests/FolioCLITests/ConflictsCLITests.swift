import Foundation
import Testing

/// `folio conflicts` end to end: a plain `git pull` (driver + post-merge
/// hook) and `folio sync` record the same conflict, the CLI lists it, and a
/// resolution on one replica closes it on the others.
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
    usleep(20_000)  // r1's assignment is the later one
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
}
