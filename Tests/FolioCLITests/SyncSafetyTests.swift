import FolioTestSupport
import Foundation
import Testing

/// What `folio sync` does with files it must not or cannot merge: a
/// document the user is editing, and files outside the
/// tables, which get git's own three-way merge.
@Suite struct SyncSafetyTests {
  /// r0 seeded, pushed, and r1 cloned with `folio clone`.
  func twoReplicas(_ box: GitPullTests.Sandbox, document: String) throws {
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("r0/folio.yaml", GitPullTests.yaml)
    try box.folio(["init"], in: "r0")
    try box.folio(["put", "todos", "t", "-"], in: "r0", input: document)
    #expect(try box.git("remote add origin \(box.remote)", in: "r0") == 0)
    try box.folio(["sync"], in: "r0")
    try box.folio(["clone", box.remote, "r1"], in: "")
  }

  func head(_ box: GitPullTests.Sandbox, _ replica: String) throws -> String {
    try FolioRunner.shellOutput("git rev-parse HEAD", in: box.root.path + "/" + replica).output
  }

  @Test func syncStopsRatherThanOverwriteAnEditInProgress() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try twoReplicas(box, document: #"{"views": 1, "title": "a"}"#)
    try box.folio(increment(5), in: "r0")
    try box.folio(["sync"], in: "r0")
    // r1's user is half way through an edit: the file is not valid JSON, so
    // the commit of step 1 leaves it out, and the merge would replace it.
    let halfDone = "{\n  \"id\": \"t\",\n  \"title\": \"b\",\n  \"views\": 1\n"
    try box.root.write("r1/todos/t.json", halfDone)
    let before = try head(box, "r1")
    let stopped = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(stopped.status == 1)
    #expect(stopped.stderr.contains("WOULD_OVERWRITE"), "\(stopped.stderr)")
    #expect(stopped.stderr.contains("todos/t.json"), "the message names the file: \(stopped.stderr)")
    #expect(
      stopped.stderr.hasSuffix("then sync again\nTo see why files were left out: folio status\n"),
      "the message says what to do: \(stopped.stderr)")
    #expect(box.file("r1/todos/t.json") == halfDone, "the edit in progress was overwritten")
    #expect(try head(box, "r1") == before, "HEAD moved though the working tree was not updated")

    // The user finishes the edit and commits; now sync merges both.
    try box.root.write("r1/todos/t.json", halfDone + "}\n")
    try box.folio(["commit", "-m", "title"], in: "r1")
    try box.folio(["sync"], in: "r1")
    let merged = try #require(box.file("r1/todos/t.json"))
    #expect(merged.contains(#""views": 6"#) && merged.contains(#""title": "b""#), "\(merged)")
    #expect(try box.git("diff --quiet HEAD", in: "r1") == 0)
  }

  @Test func filesOutsideTheTablesGetGitsThreeWayMerge() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try twoReplicas(box, document: #"{"views": 1, "tags": ["a"]}"#)
    let lines = (1...12).map { "line \($0)" }
    func readme(_ change: [Int: String]) -> String {
      lines.enumerated().map { change[$0.offset + 1] ?? $0.element }.joined(separator: "\n") + "\n"
    }
    // A README committed with plain git; folio commits only its own files.
    try box.root.write("r0/README.txt", readme([:]))
    #expect(try box.git("add README.txt", in: "r0") == 0)
    #expect(try box.git("commit -q -m readme", in: "r0") == 0)
    try box.folio(["sync"], in: "r0")
    try box.folio(["sync"], in: "r1")

    // Hunks apart: a clean merge, beside a replayed document.
    try box.root.write("r0/README.txt", readme([1: "first, from r0"]))
    #expect(try box.git("commit -q -a -m r0", in: "r0") == 0)
    try box.folio(increment(2), in: "r0")
    try box.folio(["sync"], in: "r0")
    try box.root.write("r1/README.txt", readme([12: "last, from r1"]))
    #expect(try box.git("commit -q -a -m r1", in: "r1") == 0)
    try box.folio(increment(3), in: "r1")
    try box.folio(["sync"], in: "r1")
    #expect(box.file("r1/README.txt") == readme([1: "first, from r0", 12: "last, from r1"]))
    #expect(box.file("r1/todos/t.json")?.contains(#""views": 6"#) == true)
    try box.folio(["sync"], in: "r0")
    #expect(box.file("r0/README.txt") == box.file("r1/README.txt"))

    // The same line on both sides: a conflict, reported, and nothing else
    // is touched.
    try box.root.write("r0/README.txt", readme([1: "first, from r0", 6: "six from r0"]))
    #expect(try box.git("commit -q -a -m r0", in: "r0") == 0)
    try box.folio(increment(10), in: "r0")
    try box.folio(["sync"], in: "r0")
    let ours = readme([1: "first, from r0", 6: "six from r1", 12: "last, from r1"])
    try box.root.write("r1/README.txt", ours)
    #expect(try box.git("commit -q -a -m r1", in: "r1") == 0)
    try box.folio(increment(20), in: "r1")
    try box.folio(["commit"], in: "r1")
    let before = try head(box, "r1")
    let failed = try FolioRunner.run(["sync"], in: box.root.path + "/r1")
    #expect(failed.status == 1)
    #expect(failed.stderr.contains("CONFLICT") && failed.stderr.contains("README.txt"), "\(failed.stderr)")
    #expect(box.file("r1/README.txt") == ours, "the conflicting file was changed")
    #expect(try head(box, "r1") == before)
    let grep = try FolioRunner.shellOutput(
      "grep -rl '<<<<<<<\\|>>>>>>>' todos README.txt", in: box.root.path + "/r1")
    #expect(grep.output.isEmpty, "conflict markers in: \(grep.output)")
    // The store still works: reads, writes and fsck.
    let document = try box.folio(["get", "todos", "t"], in: "r1")
    #expect(document.stdout.contains(#""views": 26"#), "\(document.stdout)")
    try box.folio(increment(1), in: "r1")
    try box.folio(["fsck"], in: "r1")
    #expect(try box.git("diff --quiet HEAD -- README.txt", in: "r1") == 0)
  }

  func increment(_ by: Int) -> [String] {
    [
      "apply", "todos", "t", "--op", "update", "--transforms",
      #"{"views": {"op": "increment", "by": \#(by)}}"#,
    ]
  }
}
