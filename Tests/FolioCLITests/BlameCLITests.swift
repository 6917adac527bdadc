import Folio
import FolioTestSupport
import Foundation
import Testing

/// `folio blame`, `folio history`, git's diff driver and the served
/// history, end to end over stores made through real merges: three
/// replicas, each with its own author, merging through `folio sync` and a
/// plain `git pull`.
@Suite struct BlameCLITests {
  func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

  func json(_ line: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
  }

  /// r0, r1 and r2 (authors Ann, Bob and Cy), each adding to `t`'s counter
  /// and set; r1 merges with `git pull`, the others with `folio sync`.
  /// Returns the replica ids.
  func threeReplicas(_ box: GitPullTests.Sandbox) throws -> [String] {
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["seed"], "title": "first"}"#])
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r2", in: box.root.path) == 0)
    try box.folio(["init"], in: "r2")
    for (replica, name) in [("r0", "Ann"), ("r1", "Bob"), ("r2", "Cy")] {
      #expect(try box.git("config user.name \(name)", in: replica) == 0)
      #expect(try box.git("config user.email \(name.lowercased())@example.com", in: replica) == 0)
    }
    try box.folio(increment(2, tag: "r0"), in: "r0")
    try box.folio(["sync"], in: "r0")
    try box.folio(increment(5, tag: "r1"), in: "r1")
    try box.folio(
      ["apply", "todos", "t", "--op", "update", "--columns", #"{"title": "bob's"}"#], in: "r1")
    try box.folio(["commit", "-m", "bob works"], in: "r1")
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    #expect(try box.git("push -q origin main", in: "r1") == 0)
    try box.folio(increment(7, tag: "r2"), in: "r2")
    try box.folio(["sync"], in: "r2")
    try box.folio(["sync"], in: "r0")
    return try ["r0", "r1", "r2"].map { replica in
      try #require(box.file(replica + "/.git/folio/replica")).trimmingCharacters(in: .whitespacesAndNewlines)
    }
  }

  func increment(_ by: Int, tag: String) -> [String] {
    [
      "apply", "todos", "t", "--op", "update", "--transforms",
      #"{"views": {"op": "increment", "by": \#(by)}, "tags": {"op": "arrayUnion", "values": ["\#(tag)"]}}"#,
    ]
  }

  @Test func blameNamesTheReplicaAndAuthorOfEachIncrementAndMember() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    let ids = try threeReplicas(box)
    let result = try box.folio(["blame", "todos", "t", "--format", "ndjson"], in: "r0")
    var byPath: [String: [String: Any]] = [:]
    for line in lines(result.stdout) {
      let object = try json(line)
      byPath[try #require(object["path"] as? String)] = object
    }
    #expect(Set(byPath.keys) == ["/id", "/tags", "/title", "/views"], "\(result.stdout)")

    let views = try #require(byPath["/views"])
    #expect(views["value"] as? Int == 15)
    let increments = try #require(views["increments"] as? [[String: Any]])
    #expect(increments.map { $0["by"] as? Int } == [2, 5, 7], "\(views)")
    #expect(increments.map { $0["replica"] as? String } == ids, "each increment names its replica")
    #expect(increments.map { $0["author"] as? String } == ["Ann", "Bob", "Cy"])
    #expect(increments.allSatisfy { $0["op"] as? String == "increment" })
    // The last increment set it; the seed's put assigned the 1 it counts from.
    #expect(views["op"] as? String == "increment" && views["replica"] as? String == ids[2])
    let assignment = try #require(views["assignment"] as? [String: Any])
    #expect(assignment["replica"] as? String == ids[0])
    #expect(assignment["commit"] as? String != increments[0]["commit"] as? String)

    let tags = try #require(byPath["/tags"])
    let members = try #require(tags["members"] as? [[String: Any]])
    #expect(members.compactMap { $0["value"] as? String }.sorted() == ["r0", "r1", "r2", "seed"])
    for member in members {
      let value = try #require(member["value"] as? String)
      let expected = value == "seed" ? ids[0] : ids[Int(value.dropFirst())!]
      #expect(member["replica"] as? String == expected, "\(member)")
      if value != "seed" { #expect(member["op"] as? String == "arrayUnion", "\(member)") }
    }

    // Bob's title came through a plain git pull's replay merge: blamed on
    // his op and his commit, not on the merge.
    let title = try #require(byPath["/title"])
    #expect(title["value"] as? String == "bob's")
    #expect(title["replica"] as? String == ids[1] && title["author"] as? String == "Bob")
    let bobsCommit = try FolioRunner.shellOutput(
      "git log --format=%H --author=Bob --grep='bob works' -1", in: box.root.path + "/r0"
    ).output.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(title["commit"] as? String == bobsCommit, "\(title)")

    // One path, and the text form.
    let one = try box.folio(["blame", "todos", "t", "views"], in: "r0")
    let rows = lines(one.stdout)
    #expect(rows.count == 5, "the value, its assignment and three increments: \(one.stdout)")
    #expect(rows[0].hasPrefix("/views  15  increment"), "\(one.stdout)")
    #expect(rows[2].contains("+2") && rows[2].contains(ids[0]) && rows[2].hasSuffix("Ann"))
    #expect(rows[4].contains("+7") && rows[4].contains(ids[2]) && rows[4].hasSuffix("Cy"))
    let pointer = try box.folio(["blame", "todos", "t", "/tags", "--format", "ndjson"], in: "r0")
    #expect(lines(pointer.stdout).count == 1)

    // Every replica blames alike once they hold the same commits.
    try box.folio(["sync"], in: "r1")
    try box.folio(["sync"], in: "r2")
    let again = try box.folio(["blame", "todos", "t", "--format", "ndjson"], in: "r2")
    #expect(again.stdout == result.stdout)
  }

  @Test func blameOfEditsNoOpExplainsAndOfUncommittedOps() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(
      try scratch.folio("put", "todos", "a", "-", input: #"{"title": "x", "lastUpdate": 1}"#).status == 0)
    #expect(try scratch.folio("commit", "-m", "one").status == 0)
    // Edited as an editor saves it, committed by plain git: no op explains it.
    try scratch.write(
      "data/todos/a.json", "{\n  \"id\": \"a\",\n  \"lastUpdate\": 1,\n  \"title\": \"hand\"\n}\n")
    try FolioRunner.shell("git commit -qam 'by hand'", in: scratch.path)
    let handCommit = try FolioRunner.shellOutput("git rev-parse HEAD", in: scratch.path).output
      .trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(
      try scratch.folio("apply", "todos", "a", "--op", "update", "--columns", #"{"lastUpdate": 2}"#).status
        == 0)
    let result = try scratch.folio("blame", "todos", "a", "--format", "ndjson")
    #expect(result.status == 0, "\(result.stderr)")
    let rows = try lines(result.stdout).map(json)
    let title = try #require(rows.first { $0["path"] as? String == "/title" })
    #expect(title["op"] as? String == "edit" && title["commit"] as? String == handCommit, "\(title)")
    #expect(title["hlc"] == nil)
    let last = try #require(rows.first { $0["path"] as? String == "/lastUpdate" })
    #expect(last["op"] as? String == "update" && last["commit"] is NSNull, "not committed yet: \(last)")

    let missing = try scratch.folio("blame", "todos", "nosuch")
    #expect(missing.status == 1 && missing.stderr.contains("no document 'nosuch' in table 'todos'"))
    #expect(try scratch.folio("blame", "todos", "a", "--format", "xml").status == 64)
    #expect(try scratch.folio("blame", "todos").status == 64)
  }

  @Test func historyFollowsTheDocumentThroughMerges() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    _ = try threeReplicas(box)
    let result = try box.folio(["history", "todos", "t", "--format", "ndjson"], in: "r0")
    let versions = try lines(result.stdout).map(json)
    let values = versions.map { ($0["value"] as? [String: Any])?["views"] as? Int }
    // Newest first. r2's sync replayed r2's +7 onto 8 (a version of its
    // own); r1's pull replayed +2 and +5 onto 1; r0 made 3; the seed made 1.
    #expect(values.first == 15, "\(result.stdout)")
    #expect(values.last == 1)
    #expect(values.contains(3) && values.contains(8), "each side's own version is listed: \(values)")
    #expect(versions.last?["summary"] as? String == "seed")
    let authors = Set(versions.compactMap { $0["author"] as? String })
    #expect(authors.isSuperset(of: ["Ann", "Bob", "Cy"]), "\(authors)")

    let diff = try box.folio(["history", "todos", "t", "--diff", "--format", "ndjson"], in: "r0")
    let newest = try json(try #require(lines(diff.stdout).first))
    let changes = try #require(newest["changes"] as? [[String: Any]])
    #expect(changes.contains { $0["path"] as? String == "/views" && $0["new"] as? Int == 15 }, "\(newest)")
    #expect(newest["value"] == nil)
    let text = try box.folio(["history", "todos", "t", "--diff"], in: "r0")
    #expect(text.stdout.hasPrefix("commit "), "\(text.stdout)")
    #expect(text.stdout.contains("    todos t /views: "))

    let missing = try FolioRunner.run(["history", "todos", "nosuch"], in: box.root.path + "/r0")
    #expect(
      missing.status == 1 && missing.stderr.contains("no commit holds document 'nosuch'"), "\(missing.stderr)"
    )
    let badFormat = try FolioRunner.run(
      ["history", "todos", "t", "--format", "xml"], in: box.root.path + "/r0")
    #expect(badFormat.status == 64 && badFormat.stderr.contains("use text or ndjson"), "\(badFormat.stderr)")
    let unknownTable = try FolioRunner.run(["history", "nosuch", "t"], in: box.root.path + "/r0")
    #expect(unknownTable.status != 0 && unknownTable.stderr.contains("nosuch"), "\(unknownTable.stderr)")
  }

  /// `git diff` and `git log -p` show table documents path by path, and
  /// still show them, as plain text, where `folio` is not on the PATH.
  @Test func gitDiffUsesTheDiffDriverAndWorksWithoutFolio() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(scratch.read(".gitattributes")?.contains("data/todos/*.json merge=folio diff=folio") == true)
    #expect(
      try scratch.folio("put", "todos", "a", "-", input: #"{"title": "x", "lastUpdate": 1}"#).status == 0)
    #expect(try scratch.folio("commit", "-m", "one").status == 0)
    #expect(
      try scratch.folio(
        "apply", "todos", "a", "--op", "update", "--columns", #"{"title": "y", "n": {"m": [1]}}"#
      )
      .status == 0)
    #expect(try scratch.folio("commit", "-m", "two").status == 0)
    let diff = try FolioRunner.shellOutput("git diff HEAD~1 HEAD -- data", in: scratch.path).output
    #expect(diff.contains("\n-/title = \"x\"\n+/n/m = [1]\n+/title = \"y\"\n"), "\(diff)")
    let log = try FolioRunner.shellOutput("git log -p -1 --format= -- data", in: scratch.path).output
    #expect(log.contains("+/title = \"y\""), "\(log)")
    // Without folio: the driver falls back to the file itself.
    let command = try FolioRunner.shellOutput("git config diff.folio.textconv", in: scratch.path).output
      .trimmingCharacters(in: .newlines)
    #expect(command.contains(FolioRunner.binary), "\(command)")
    let git = Process()
    git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
    git.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
    git.arguments = [
      "config", "diff.folio.textconv",
      command.replacingOccurrences(of: FolioRunner.binary, with: "/nonexistent/folio"),
    ]
    try git.run()
    git.waitUntilExit()
    #expect(git.terminationStatus == 0)
    let bare = try FolioRunner.shellOutput("git diff HEAD~1 HEAD -- data", in: scratch.path)
    #expect(bare.status == 0, "\(bare.output)")
    #expect(bare.output.contains("+  \"title\": \"y\""), "\(bare.output)")
    // A file that is not a JSON object is shown as it is; a missing one is
    // an error.
    try scratch.write("broken.json", "{\n  \"id\": \n")
    #expect(try scratch.folio("diff-textconv", "broken.json").stdout == "{\n  \"id\": \n")
    let gone = try scratch.folio("diff-textconv", "nosuch.json")
    #expect(gone.status == 1 && gone.stderr.contains("nosuch.json"), "\(gone.stderr)")
    let direct = try scratch.folio("diff-textconv", "data/todos/a.json")
    #expect(direct.stdout == "/id = \"a\"\n/lastUpdate = 1\n/n/m = [1]\n/title = \"y\"\n")
  }

  /// `folio serve` gives the same blame and history under `.info`, for the
  /// page.
  @Test func serveGivesBlameAndHistoryUnderInfo() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    let ids = try threeReplicas(box)
    let server = try ServeCLITests.Server(in: box.root.path + "/r0")
    defer { #expect(server.stop() == 0) }
    let blame = try ServeCLITests.curl("GET", server.base + "/.info/blame/todos/t.json")
    #expect(blame.status == 200, "\(blame.body)")
    let cli = try box.folio(["blame", "todos", "t", "--format", "ndjson"], in: "r0").stdout
    #expect(
      blame.json?.arrayValue?.map { $0.compactString }
        == lines(cli).map { try! JSONValue(parsing: $0).compactString })
    let views = blame.json?.arrayValue?.first { $0["path"] == "/views" }
    #expect(views?["increments"]?.arrayValue?.map { $0["replica"]?.stringValue } == ids)

    let history = try ServeCLITests.curl("GET", server.base + "/.info/history/todos/t.json")
    #expect(history.status == 200, "\(history.body)")
    let newest = history.json?.arrayValue?.first
    #expect(newest?["value"]?["views"] == 15)
    #expect(newest?["changes"]?.arrayValue?.isEmpty == false)
    #expect(history.json?.arrayValue?.last?["summary"] == "seed")

    #expect(try ServeCLITests.curl("GET", server.base + "/.info/blame/todos/nosuch.json").status == 404)
    #expect(try ServeCLITests.curl("GET", server.base + "/.info/history/nosuch/t.json").status == 404)
    #expect(try ServeCLITests.curl("GET", server.base + "/.info/history/todos.json").status == 400)
    #expect(try ServeCLITests.curl("PUT", server.base + "/.info/blame/todos/t.json", body: "1").status == 405)
  }
}
