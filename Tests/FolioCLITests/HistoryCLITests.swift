import FolioTestSupport
import Foundation
import Glibc
import Testing

/// `folio diff` and `--as-of` end to end: changes by document and JSON
/// path between commits and against the working tree, past commits read
/// without a checkout, and a diff across a replay merge made by a plain
/// `git pull`.
@Suite struct HistoryCLITests {
  func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

  /// A store with two commits: `a` made, then `a` changed (a register, a
  /// counter, a set and a new nested object) and `b` added.
  func twoCommits() throws -> CLIScratch {
    let scratch = try CLIScratch()
    #expect(try scratch.folio("init").status == 0)
    let first = #"{"title": "x", "views": 1, "tags": ["a"], "lastUpdate": 1}"#
    #expect(try scratch.folio("put", "todos", "a", "-", input: first).status == 0)
    #expect(try scratch.folio("commit", "-m", "one").status == 0)
    let update = try scratch.folio(
      "apply", "todos", "a", "--op", "update", "--columns",
      #"{"title": "y", "n": {"x": 1}, "lastUpdate": 3}"#,
      "--transforms",
      #"{"views": {"op": "increment", "by": 3}, "tags": {"op": "arrayUnion", "values": ["b"]}}"#)
    #expect(update.status == 0, "\(update.stderr)")
    let second = #"{"title": "b", "lastUpdate": 2}"#
    #expect(try scratch.folio("put", "todos", "b", "-", input: second).status == 0)
    #expect(try scratch.folio("commit", "-m", "two").status == 0)
    return scratch
  }

  @Test func diffShowsEachPathBetweenCommitsAndInTheWorkingTree() throws {
    let scratch = try twoCommits()
    defer { scratch.remove() }
    let diff = try scratch.folio("diff", "HEAD~1", "HEAD", "--format", "ndjson")
    #expect(diff.status == 0, "\(diff.stderr)")
    #expect(
      lines(diff.stdout) == [
        #"{"change":"changed","new":3,"old":1,"path":"/lastUpdate","pk":"a","table":"todos"}"#,
        #"{"change":"added","new":{"x":1},"path":"/n","pk":"a","table":"todos"}"#,
        #"{"added":["b"],"change":"changed","new":["a","b"],"old":["a"],"path":"/tags","pk":"a","removed":[],"table":"todos"}"#,
        #"{"change":"changed","new":"y","old":"x","path":"/title","pk":"a","table":"todos"}"#,
        #"{"change":"changed","delta":3,"new":4,"old":1,"path":"/views","pk":"a","table":"todos"}"#,
        #"{"change":"added","new":{"id":"b","lastUpdate":2,"title":"b"},"path":"","pk":"b","table":"todos"}"#,
      ], "\(diff.stdout)")
    // The same, named as a table and in the other direction.
    let back = try scratch.folio("diff", "HEAD", "HEAD~1", "todos", "--format", "ndjson")
    #expect(
      lines(back.stdout).contains(
        #"{"change":"changed","delta":-3,"new":1,"old":4,"path":"/views","pk":"a","table":"todos"}"#))
    #expect(lines(back.stdout).last?.contains(#""change":"removed""#) == true)
    let text = try scratch.folio("diff", "HEAD~1", "HEAD")
    #expect(lines(text.stdout).contains(#"todos a /views: -1 +4 (+3)"#), "\(text.stdout)")
    #expect(lines(text.stdout).contains(#"todos a /tags: -["a"] +["a","b"] members +["b"]"#))
    #expect(!text.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
    let stat = try scratch.folio("diff", "HEAD~1", "HEAD", "--stat")
    #expect(stat.stdout == "todos: 1 added, 0 removed, 1 changed (5 paths)\n")
    let statJSON = try scratch.folio("diff", "HEAD~1", "HEAD", "--stat", "--format", "ndjson")
    #expect(statJSON.stdout == #"{"added":1,"changed":1,"paths":5,"removed":0,"table":"todos"}"# + "\n")
    #expect(try scratch.folio("diff").stdout.isEmpty, "a clean working tree")

    // Against the working tree: an edit with no watcher, a put not yet
    // committed, a removal, and a broken file that is named and left out.
    try scratch.write(
      "data/todos/b.json", "{\n  \"id\": \"b\",\n  \"lastUpdate\": 2,\n  \"title\": \"edited\"\n}\n")
    #expect(try scratch.folio("put", "todos", "c", "-", input: #"{"lastUpdate": 4}"#).status == 0)
    #expect(try scratch.folio("rm", "todos", "a").status == 0)
    try scratch.write("data/todos/bad.json", "{\n  \"id\": \"bad\",\n}\n")
    let working = try scratch.folio("diff", "--format", "ndjson")
    #expect(working.status == 1)
    #expect(working.stderr.contains("data/todos/bad.json:2:14: error: trailing comma"), "\(working.stderr)")
    let changes = lines(working.stdout)
    #expect(changes.count == 3, "\(working.stdout)")
    #expect(changes.contains { $0.contains(#""change":"removed""#) && $0.contains(#""pk":"a""#) })
    #expect(
      changes.contains(
        #"{"change":"changed","new":"edited","old":"b","path":"/title","pk":"b","table":"todos"}"#))
    #expect(changes.contains { $0.contains(#""change":"added""#) && $0.contains(#""pk":"c""#) })
    // One revision: that commit against the working tree.
    let sinceFirst = try scratch.folio("diff", "HEAD~1", "--stat")
    #expect(sinceFirst.stdout == "todos: 2 added, 1 removed, 0 changed (0 paths)\n", "\(sinceFirst.stdout)")

    let unknown = try scratch.folio("diff", "nosuch")
    #expect(unknown.status == 1)
    #expect(unknown.stderr.contains("'nosuch' names no commit here"), "\(unknown.stderr)")
    #expect(try scratch.folio("diff", "--format", "xml").status == 64)
  }

  @Test func asOfReadsAPastCommitWithoutTouchingTheWorkingTree() throws {
    let scratch = try twoCommits()
    defer { scratch.remove() }
    // Uncommitted work that must stay as it is.
    try scratch.write("data/todos/a.json", "{\n  \"id\": \"a\",\n  \"title\": \"mine\"\n}\n")
    let before = try FolioRunner.shellOutput(
      "git status --porcelain && ls -l --time-style=full-iso data/todos", in: scratch.path)

    let get = try scratch.folio("get", "todos", "a", "--as-of", "HEAD~1")
    #expect(get.status == 0, "\(get.stderr)")
    #expect(get.stdout.contains("\"title\": \"x\"") && get.stdout.contains("\"views\": 1"), "\(get.stdout)")
    let missing = try scratch.folio("get", "todos", "b", "--as-of", "HEAD~1")
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("no document 'b' in table 'todos' at 'HEAD~1'"), "\(missing.stderr)")

    // Every query option, at HEAD: ordered by lastUpdate (the table's order).
    let all = try scratch.folio("query", "todos", "--as-of", "HEAD")
    #expect(lines(all.stdout).map { $0.contains(#""id":"b""#) } == [true, false], "\(all.stdout)")
    let byKey = try scratch.folio(
      "query", "todos", "--as-of", "HEAD", "--order-by-key", "--limit-to-last", "1")
    #expect(lines(byKey.stdout).count == 1 && byKey.stdout.contains(#""id":"b""#))
    let filtered = try scratch.folio("query", "todos", "--as-of", "HEAD", "--where", "views > 2")
    #expect(
      lines(filtered.stdout) == [
        #"{"id":"a","lastUpdate":3,"n":{"x":1},"tags":["a","b"],"title":"y","views":4}"#
      ])
    let ranged = try scratch.folio(
      "query", "todos", "--as-of", "HEAD", "--order-by-child", "title", "--start-after", "b")
    #expect(lines(ranged.stdout).count == 1 && ranged.stdout.contains(#""title":"y""#))
    #expect(try scratch.folio("query", "todos", "--as-of", "HEAD~1", "--count").stdout == "1\n")
    let csv = try scratch.folio("export", "todos", "--as-of", "HEAD~1", "--format", "csv")
    #expect(
      csv.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        == "id,lastUpdate,tags,title,views\na,1,\"[\"\"a\"\"]\",x,1\n", "\(csv.stdout)")

    // A date: the last commit before it.
    let later = try scratch.folio("get", "todos", "a", "--as-of", "2099-01-01")
    #expect(later.stdout.contains("\"title\": \"y\""), "\(later.stderr)")
    let earlier = try scratch.folio("get", "todos", "a", "--as-of", "2001-01-01")
    #expect(earlier.status == 1)
    #expect(
      earlier.stderr.contains("no commit on this branch is older than '2001-01-01'"), "\(earlier.stderr)")
    let bad = try scratch.folio("query", "todos", "--as-of", "nosuch")
    #expect(bad.status == 1 && bad.stderr.contains("names no commit"))
    #expect(try scratch.folio("query", "todos", "--as-of", "HEAD", "--follow").status == 64)

    let after = try FolioRunner.shellOutput(
      "git status --porcelain && ls -l --time-style=full-iso data/todos", in: scratch.path)
    #expect(after.output == before.output, "the working tree is untouched")
    #expect(scratch.read("data/todos/a.json") == "{\n  \"id\": \"a\",\n  \"title\": \"mine\"\n}\n")
  }

  /// A replay merge by plain `git pull`: the merge commit against each
  /// parent shows what the other side brought, counted and unioned.
  @Test func diffAcrossAReplayMergeShowsWhatEachSideBrought() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["seed"]}"#])
    try box.folio(increment(2, tag: "r0"), in: "r0")
    try box.folio(["sync"], in: "r0")
    try box.folio(increment(5, tag: "r1"), in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    let fromOurs = try box.folio(["diff", "HEAD^1", "HEAD", "--format", "ndjson"], in: "r1").stdout
    #expect(fromOurs.contains(#""delta":2,"new":8,"old":6,"path":"/views""#), "\(fromOurs)")
    #expect(fromOurs.contains(#""added":["r0"]"#), "\(fromOurs)")
    let fromTheirs = try box.folio(["diff", "HEAD^2", "HEAD", "--format", "ndjson"], in: "r1").stdout
    #expect(fromTheirs.contains(#""delta":5,"new":8,"old":3,"path":"/views""#), "\(fromTheirs)")
    #expect(fromTheirs.contains(#""added":["r1"]"#), "\(fromTheirs)")
    // As of r0's side of the merge.
    let theirs = try box.folio(["get", "todos", "t", "--as-of", "HEAD^2"], in: "r1").stdout
    #expect(theirs.contains("\"views\": 3"), "\(theirs)")
  }

  func increment(_ by: Int, tag: String) -> [String] {
    [
      "apply", "todos", "t", "--op", "update", "--transforms",
      #"{"views": {"op": "increment", "by": \#(by)}, "tags": {"op": "arrayUnion", "values": ["\#(tag)"]}}"#,
    ]
  }
}
