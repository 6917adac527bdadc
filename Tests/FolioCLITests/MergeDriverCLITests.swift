import FolioTestSupport
import Foundation
import Testing

/// `folio merge-driver` run as git runs it, and `.gitattributes` kept in
/// step with `folio.yaml`.
@Suite struct MergeDriverCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: todos
        columns:
          views: counter
          tags: set
          title: register
    """

  /// Without MERGE_HEAD (and no `GITHEAD_*`), the driver has no op logs to
  /// replay: it diffs the three versions through the column kinds.
  @Test func fallbackMergesThreeVersionsByColumnKind() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    try scratch.write("v/base", #"{"id": "t", "views": 1, "tags": ["a"], "title": "x", "note": "n"}"#)
    try scratch.write("v/ours", #"{"id": "t", "views": 4, "tags": ["a", "b"], "title": "ours", "note": "n"}"#)
    try scratch.write("v/theirs", #"{"id": "t", "views": 6, "tags": ["c"], "title": "x", "note": "n2"}"#)
    let result = try scratch.folio("merge-driver", "v/base", "v/ours", "v/theirs", "todos/t.json")
    #expect(result.status == 0, "\(result.stderr)")
    let merged = try #require(scratch.read("v/ours"))
    // Counter: 1 + 3 + 5. Set: ours added b, theirs added c and removed a.
    // Registers: each side's own change survives.
    #expect(
      merged == """
        {
          "id": "t",
          "note": "n2",
          "tags": [
            "b",
            "c"
          ],
          "title": "ours",
          "views": 9
        }

        """, "\(merged)")
  }

  @Test func invalidSideFailsWithoutWritingOurs() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let ours = #"{"id": "t", "views": 4}"#
    try scratch.write("v/base", #"{"id": "t", "views": 1}"#)
    try scratch.write("v/ours", ours)
    try scratch.write("v/theirs", "{\"id\": \"t\",\n  \"views\": ")
    let result = try scratch.folio("merge-driver", "v/base", "v/ours", "v/theirs", "todos/t.json")
    #expect(result.status != 0)
    #expect(result.stderr.contains("todos/t.json:2:"), "the error names the file and place: \(result.stderr)")
    #expect(scratch.read("v/ours") == ours, "ours was written though the merge failed")
  }

  /// A table added to `folio.yaml` after `folio init` is routed to the
  /// driver by the next `folio commit`, and a plain `git pull` then merges
  /// its documents by replay.
  @Test func gitattributesFollowFolioYAML() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("r0/folio.yaml", GitPullTests.yaml)
    try box.folio(["init"], in: "r0")
    try box.folio(["commit", "-m", "seed"], in: "r0")
    #expect(try box.git("remote add origin \(box.remote)", in: "r0") == 0)
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r1", in: box.root.path) == 0)
    try box.folio(["init"], in: "r1")

    try box.root.write(
      "r0/folio.yaml", GitPullTests.yaml + "\n  notes:\n    path: notes\n    columns:\n      likes: counter\n"
    )
    #expect(box.file("r0/.gitattributes")?.contains("notes/") == false)
    try box.folio(["put", "notes", "n", "-"], in: "r0", input: #"{"likes": 1}"#)
    try box.folio(["commit", "-m", "notes"], in: "r0")
    #expect(box.file("r0/.gitattributes")?.contains("notes/*.json merge=folio") == true)
    let routed = try FolioRunner.shellOutput(
      "git check-attr merge -- notes/n.json", in: box.root.path + "/r0")
    #expect(routed.output.contains("merge: folio"), "\(routed.output)")
    #expect(try box.git("diff --quiet HEAD", in: "r0") == 0, ".gitattributes was left uncommitted")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)

    let raise = { (by: Int) in
      [
        "apply", "notes", "n", "--op", "update", "--transforms",
        #"{"likes": {"op": "increment", "by": \#(by)}}"#,
      ]
    }
    try box.folio(raise(2), in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    try box.folio(raise(3), in: "r1")
    try box.folio(["commit"], in: "r1")
    // Textually 3 against 4 would conflict; the driver sums the counter.
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    let merged = try #require(box.file("r1/notes/n.json"))
    #expect(merged.contains(#""likes": 6"#) && !merged.contains("<<<<<<<"), "\(merged)")
    #expect(try box.git("diff --quiet HEAD", in: "r1") == 0)
  }
}
