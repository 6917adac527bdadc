import Folio
import FolioTestSupport
import Foundation
import Testing

/// `folio status` and `folio commit` as users run them, with the index
/// daemon they start: after the first ones, they look only at the files
/// the daemon's journal names, and say the same as `git status`.
struct StatusJournalCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
    """

  /// The daemon on for any store size, and each scan saying how it looked.
  static let on = [
    "FOLIO_INDEX_DAEMON": "auto", "FOLIO_DEBUG_INDEX": "1", "FOLIO_INDEX_DAEMON_MIN_DOCUMENTS": "0",
  ]

  func folio(_ scratch: CLIScratch, _ arguments: String...) throws -> FolioRunner.Result {
    try FolioRunner.run(arguments, in: scratch.path, environment: Self.on)
  }

  /// Saves `text` as vim does: the old file renamed away, a new one
  /// written, the old one removed.
  func saveAsVim(_ scratch: CLIScratch, _ relative: String, _ text: String) throws {
    let path = scratch.path + "/" + relative
    if FileManager.default.fileExists(atPath: path) {
      try FileManager.default.moveItem(atPath: path, toPath: path + "~")
    }
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    try? FileManager.default.removeItem(atPath: path + "~")
  }

  /// The file of document `pk` of `todos` in `layout`, relative to the
  /// store; its folder made, as a user saving a new file there would.
  func document(_ scratch: CLIScratch, _ pk: String, _ layout: TableLayout) throws -> String {
    let name = try TableConfig(name: "todos", path: "data/todos", layout: layout).path(of: pk)
    try FileManager.default.createDirectory(
      atPath: scratch.path + "/" + (name as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    return name
  }

  @Test(arguments: TableLayout.allCases)
  func statusAndCommitAskTheDaemonsJournalAndAgreeWithGit(layout: TableLayout) throws {
    let scratch = try CLIScratch(yaml: Self.yaml + "\n    layout: \(layout.rawValue)\n")
    defer {
      _ = try? scratch.folio("index-daemon", "--stop")
      scratch.remove()
    }
    #expect(try scratch.folio("init").status == 0)
    for k in 0..<30 {
      #expect(try scratch.folio("put", "todos", "d\(k)", "-", input: #"{"n": \#(k)}"#).status == 0)
    }
    #expect(try scratch.folio("commit", "-m", "start").status == 0)

    // The first status starts the daemon; one that runs once the daemon
    // answers takes its first token; the next looks only at what changed.
    let first = try folio(scratch, "status")
    #expect(first.status == 0)
    #expect(
      try eventually {
        try scratch.folio("index-daemon", "--status").stdout.hasPrefix("index daemon running")
      })
    #expect(try eventually { try folio(scratch, "status").stderr.contains("the journal named") })

    try saveAsVim(scratch, try document(scratch, "d3", layout), "{\n  \"id\": \"d3\",\n  \"n\": 33\n}\n")
    // d40's folder may be new in a hashed table: the daemon watches it
    // from its creation, and names what was saved in it before.
    try #"{"id": "d40", "n": 40}"#.write(
      toFile: scratch.path + "/" + (try document(scratch, "d40", layout)), atomically: true, encoding: .utf8)
    try FileManager.default.removeItem(atPath: scratch.path + "/" + (try document(scratch, "d7", layout)))
    let status = try folio(scratch, "status")
    #expect(status.status == 0)
    // The journal named the three, and the editors' temp files.
    #expect(status.stderr.contains("file(s) the journal named"), "\(status.stderr)")
    #expect(!status.stderr.contains("every file checked"), "\(status.stderr)")
    #expect(status.stdout.contains("3 changed document(s)"), "\(status.stdout)")
    for pk in ["d3", "d40", "d7"] { #expect(status.stdout.contains(pk), "\(status.stdout)") }

    // The commit looks at the same files, and leaves git nothing to do.
    let commit = try folio(scratch, "commit", "-m", "three")
    #expect(commit.status == 0, "\(commit.stderr)")
    #expect(commit.stdout.contains("3 document(s)"), "\(commit.stdout)")
    #expect(commit.stderr.contains("file(s) the journal named"), "\(commit.stderr)")
    let after = try folio(scratch, "status")
    #expect(after.stdout.contains("nothing to commit"), "\(after.stdout)")
    #expect(after.stderr.contains("table todos: 0 file(s) the journal named"), "\(after.stderr)")
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.isEmpty)

    // A plain `git status` may rewrite git's index (to refresh stat data):
    // the next status finds the index still holds HEAD's files, without a
    // stat of any, and asks the journal as before.
    let d5 = try document(scratch, "d5", layout)
    try saveAsVim(scratch, d5, "{\n  \"id\": \"d5\",\n  \"n\": 55\n}\n")
    // d1 touched, the same bytes: git refreshes its entry and rewrites the index.
    let d1 = scratch.path + "/" + (try document(scratch, "d1", layout))
    let soon = Date(timeIntervalSinceNow: 5)
    try FileManager.default.setAttributes([.modificationDate: soon], ofItemAtPath: d1)
    let index = scratch.path + "/.git/index"
    let before = FileManager.default.contents(atPath: index)
    let porcelain = try git(["status", "--porcelain"], in: scratch.path).output
    #expect(porcelain == " M \(d5)\n", "\(porcelain)")
    #expect(FileManager.default.contents(atPath: index) != before, "git left its index")
    let again = try folio(scratch, "status")
    #expect(again.stdout.contains("1 changed document(s)") && again.stdout.contains("d5"), "\(again.stdout)")
    #expect(again.stderr.contains("file(s) the journal named"), "\(again.stderr)")
    #expect(!again.stderr.contains("every file checked"), "\(again.stderr)")
  }
}
