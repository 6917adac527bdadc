import FolioTestSupport
import Foundation
import Testing

/// The same merges through plain `git pull`/`git push` (git calls
/// `folio merge-driver`), through `folio sync`, and through a mix.
@Suite struct GitPullTests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: todos
        columns:
          views: counter
          tags: set
    """

  struct Sandbox {
    let root: CLIScratch
    /// Said first in every failure message (a randomized test's seed).
    let context: String

    init(context: String = "") throws {
      root = try CLIScratch(yaml: nil)
      self.context = context.isEmpty ? "" : context + ": "
    }
    var remote: String { root.path + "/remote.git" }

    @discardableResult
    func git(_ command: String, in replica: String) throws -> Int32 {
      try shellGit(command, in: root.path + "/" + replica).status
    }

    @discardableResult
    func folio(_ arguments: [String], in replica: String, input: String? = nil) throws -> FolioRunner.Result {
      let result = try FolioRunner.run(arguments, in: root.path + "/" + replica, input: input)
      #expect(
        result.status == 0,
        "\(context)folio \(arguments.joined(separator: " ")) in \(replica): \(result.stderr)")
      return result
    }

    func file(_ relative: String) -> String? { root.read(relative) }

    /// Checks that r1's merge commit holds the tree `folio sync` gave its
    /// twin copy, and that r1's working tree is clean.
    func expectConcludedLikeTwin(sourceLocation: SourceLocation = #_sourceLocation) throws {
      let tree = try FolioRunner.shellOutput("git rev-parse HEAD^{tree}", in: root.path + "/r1").output
      let twinTree = try FolioRunner.shellOutput("git rev-parse HEAD^{tree}", in: root.path + "/twin").output
      #expect(
        tree == twinTree, "the merge commit holds what folio sync commits", sourceLocation: sourceLocation)
      let status = try FolioRunner.shellOutput("git status --porcelain", in: root.path + "/r1")
      #expect(status.output.isEmpty, "\(status.output)", sourceLocation: sourceLocation)
    }

    /// r0 (a `folio init` store holding `documents` of `todos`, committed and
    /// pushed to a bare `remote.git`) and r1, its plain `git clone`, where
    /// `folio init` runs too unless `initClone` is false.
    func seedAndClone(_ documents: KeyValuePairs<String, String>, initClone: Bool = true) throws {
      try FolioRunner.shell("git init -q --bare remote.git", in: root.path)
      try root.write("r0/folio.yaml", GitPullTests.yaml)
      try folio(["init"], in: "r0")
      for (pk, body) in documents { try folio(["put", "todos", pk, "-"], in: "r0", input: body) }
      try folio(["commit", "-m", "seed"], in: "r0")
      #expect(try git("remote add origin \(remote)", in: "r0") == 0)
      #expect(try git("push -q origin main", in: "r0") == 0)
      #expect(try FolioRunner.shell("git clone -q -b main remote.git r1", in: root.path) == 0)
      if initClone { try folio(["init"], in: "r1") }
    }
  }

  func increment(_ by: Int, tag: String) -> [String] {
    [
      "apply", "todos", "t", "--op", "update", "--transforms",
      #"{"views": {"op": "increment", "by": \#(by)}, "tags": {"op": "arrayUnion", "values": ["\#(tag)"]}}"#,
    ]
  }

  @Test func plainGitPullMergesLikeFolioSync() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    // r1: a plain clone where only `folio init` ran.
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["a"], "title": "x"}"#])
    #expect(try box.git("config merge.folio.driver", in: "r1") == 0)

    try box.folio(increment(5, tag: "b"), in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    try box.folio(increment(7, tag: "c"), in: "r1")
    try box.folio(["commit"], in: "r1")
    // A twin of r1 (same replica, same commits) merges with folio sync.
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    try box.folio(["sync", "--no-push"], in: "twin")

    let pulled = try #require(box.file("r1/todos/t.json"))
    #expect(pulled.contains("\"views\": 13"))
    #expect(pulled.contains("\"b\"") && pulled.contains("\"c\""))
    #expect(!pulled.contains("<<<<<<<"))
    #expect(pulled == box.file("twin/todos/t.json"), "git pull and folio sync must give the same bytes")
    // A clean tree: the driver resolved everything, nothing conflicted.
    let status = try FolioRunner.run(["status", "--json"], in: box.root.path + "/r1")
    #expect(status.status == 0)
    #expect(try box.git("diff --quiet HEAD", in: "r1") == 0)

    // Mixed: r1 pushes with git, r0 syncs with folio, then pulls with git.
    #expect(try box.git("push -q origin main", in: "r1") == 0)
    try box.folio(increment(100, tag: "d"), in: "r0")
    try box.folio(["sync"], in: "r0")
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    let final0 = try #require(box.file("r0/todos/t.json"))
    #expect(final0.contains("\"views\": 113"))
    #expect(final0 == box.file("r1/todos/t.json"))
  }

  /// git runs the driver only for files both sides changed. Here r1's op (a
  /// union of a member already there) leaves its file as it was, so git
  /// takes r0's file; the post-merge hook replays both sides' ops, as
  /// `folio sync` does, and the later union wins.
  @Test func plainGitPullReplaysDocumentsChangedOnOneSideWithOpsOnBoth() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["a", "b"]}"#])
    let hook = try #require(box.file("r1/.git/hooks/post-merge"))
    #expect(hook.contains("merge-driver --post-merge"))

    let remove = #"{"tags": {"op": "arrayRemove", "values": ["a"]}}"#
    try box.folio(["apply", "todos", "t", "--op", "update", "--transforms", remove], in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    waitForNextMillisecond()  // r1's op comes later, by the clock too
    let union = #"{"tags": {"op": "arrayUnion", "values": ["a"]}}"#
    try box.folio(["apply", "todos", "t", "--op", "update", "--transforms", union], in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try box.git("diff --quiet HEAD~1 HEAD -- todos", in: "r1") == 0)  // only the op log changed
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    try box.folio(["sync", "--no-push"], in: "twin")

    let synced = try #require(box.file("twin/todos/t.json"))
    #expect(synced.contains("\"a\""), "the later union wins: \(synced)")
    #expect(box.file("r1/todos/t.json") == synced, "git pull and folio sync must give the same bytes")
    // The merge commit holds it and the tree is clean.
    #expect(try box.git("diff --quiet HEAD", in: "r1") == 0)
    #expect(try box.git("rev-parse -q --verify HEAD^2", in: "r1") == 0)
    #expect(try FolioRunner.run(["status"], in: box.root.path + "/r1").stdout.contains("nothing to commit"))
  }

  /// The driver on its own (no post-merge hook): during `git pull` it finds
  /// HEAD and the commit being merged and replays their op logs. `hits` is
  /// not a counter in folio.yaml, so synthetic ops from the three versions
  /// would read both edits as assignments and keep one; the logged
  /// increments add up.
  @Test func driverReplaysOpLogsOfHeadAndMergeHead() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"hits": 1}"#])
    #expect(try FolioRunner.shell("rm .git/hooks/post-merge", in: box.root.path + "/r1") == 0)

    let raise = { (by: Int) in
      [
        "apply", "todos", "t", "--op", "update", "--transforms",
        #"{"hits": {"op": "increment", "by": \#(by)}}"#,
      ]
    }
    try box.folio(raise(5), in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    try box.folio(raise(7), in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    #expect(try box.git("fetch -q origin", in: "r1") == 0)
    // The fallback, for contrast: the three versions alone, no op logs.
    for (name, revision) in [("base", "HEAD~1"), ("ours", "HEAD"), ("theirs", "origin/main")] {
      #expect(
        try FolioRunner.shell(
          "git show \(revision):todos/t.json > ../\(name).json", in: box.root.path + "/r1") == 0)
    }
    let fallback = try FolioRunner.run(
      ["merge-driver", "../base.json", "../ours.json", "../theirs.json", "todos/t.json"],
      in: box.root.path + "/r1")
    #expect(fallback.status == 0, "\(fallback.stderr)")
    let synthetic = try #require(box.file("ours.json"))
    #expect(!synthetic.contains(#""hits": 13"#), "the fallback should read hits as a register: \(synthetic)")

    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    try box.folio(["sync", "--no-push"], in: "twin")
    let pulled = try #require(box.file("r1/todos/t.json"))
    #expect(pulled.contains(#""hits": 13"#), "the driver replays both logs: \(pulled)")
    #expect(pulled == box.file("twin/todos/t.json"), "git pull and folio sync must give the same bytes")
    #expect(try box.git("diff --quiet HEAD", in: "r1") == 0)
    #expect(try box.git("rev-parse -q --verify HEAD^2", in: "r1") == 0)
  }

  /// A `post-merge` hook the user had before `folio init` keeps running,
  /// after Folio's; rerunning `folio init` changes nothing, and a
  /// `core.hooksPath` folder is used instead of `.git/hooks`.
  @Test func existingPostMergeHookRunsAfterFolios() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["a", "b"]}"#], initClone: false)
    // The user's hook sees what git passes and what Folio already did.
    let userHook = """
      #!/bin/sh
      echo "user hook $1 $(grep -c '"a"' todos/t.json)" >> ../hook.log

      """
    try box.root.write("r1/.git/hooks/post-merge", userHook)
    #expect(try FolioRunner.shell("chmod +x .git/hooks/post-merge", in: box.root.path + "/r1") == 0)
    try box.folio(["init"], in: "r1")
    let installed = try #require(box.file("r1/.git/hooks/post-merge"))
    #expect(installed.contains("merge-driver --post-merge"))
    #expect(box.file("r1/.git/hooks/post-merge.user") == userHook)
    try box.folio(["init"], in: "r1")
    #expect(box.file("r1/.git/hooks/post-merge") == installed, "a rerun of folio init changed the hook")
    #expect(box.file("r1/.git/hooks/post-merge.user") == userHook)
    #expect(box.file("r1/.git/hooks/post-merge.user.2") == nil)
    // A tool that writes its hook again: still kept, not duplicated.
    try box.root.write("r1/.git/hooks/post-merge", userHook)
    try box.folio(["init"], in: "r1")
    #expect(box.file("r1/.git/hooks/post-merge") == installed)
    #expect(box.file("r1/.git/hooks/post-merge.user.2") == nil)

    // As plainGitPullReplaysDocumentsChangedOnOneSideWithOpsOnBoth: only
    // Folio's hook makes the later union win.
    let remove = #"{"tags": {"op": "arrayRemove", "values": ["a"]}}"#
    try box.folio(["apply", "todos", "t", "--op", "update", "--transforms", remove], in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    waitForNextMillisecond()  // r1's op comes later, by the clock too
    let union = #"{"tags": {"op": "arrayUnion", "values": ["a"]}}"#
    try box.folio(["apply", "todos", "t", "--op", "update", "--transforms", union], in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)
    try box.folio(["sync", "--no-push"], in: "twin")
    let synced = try #require(box.file("twin/todos/t.json"))
    #expect(synced.contains("\"a\""))
    #expect(box.file("r1/todos/t.json") == synced, "git pull and folio sync must give the same bytes")
    #expect(box.file("hook.log") == "user hook 0 1\n", "the user's hook runs once, after Folio's")

    // core.hooksPath: the hook goes there, and the user's one there is kept.
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r2", in: box.root.path) == 0)
    #expect(try box.git("config core.hooksPath .githooks", in: "r2") == 0)
    try box.root.write("r2/.githooks/post-merge", userHook)
    try box.folio(["init"], in: "r2")
    #expect(box.file("r2/.githooks/post-merge")?.contains("merge-driver --post-merge") == true)
    #expect(box.file("r2/.githooks/post-merge.user") == userHook)
    #expect(box.file("r2/.git/hooks/post-merge") == nil)
  }

  /// A document removed on one side and changed on the other: git runs no
  /// driver and `git pull` stops with `CONFLICT (modify/delete)`; `folio
  /// commit` concludes the merge with the bytes `folio sync` gives.
  @Test(arguments: [true, false]) func modifyDeleteStoppedPullIsConcludedByFolioCommit(removeLocally: Bool)
    throws
  {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1, "tags": ["a"]}"#, "u": #"{"views": 1}"#])

    let (remover, updater) = removeLocally ? ("r0", "r1") : ("r1", "r0")
    try box.folio(["rm", "todos", "t"], in: remover)
    try box.folio(increment(3, tag: "b"), in: updater)
    try box.folio(
      ["apply", "todos", "u", "--op", "update", "--transforms", #"{"views": {"op": "increment", "by": 2}}"#],
      in: "r0")
    try box.folio(
      ["apply", "todos", "u", "--op", "update", "--transforms", #"{"views": {"op": "increment", "by": 5}}"#],
      in: "r1")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    try box.folio(["commit"], in: "r1")
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    let pull = try FolioRunner.shellOutput(
      "git pull --no-rebase --no-edit origin main", in: box.root.path + "/r1")
    #expect(pull.status != 0 && pull.output.contains("CONFLICT (modify/delete)"), "\(pull.output)")
    if removeLocally {
      // An edit made since the pull is never overwritten.
      let merged = try #require(box.file("r1/todos/u.json"))
      try box.root.write("r1/todos/u.json", #"{"id": "u", "views": 100}"#)
      let refused = try FolioRunner.run(["commit"], in: box.root.path + "/r1")
      #expect(refused.status == 1 && refused.stderr.contains("todos/u.json"), "\(refused.stderr)")
      #expect(try box.git("rev-parse -q --verify MERGE_HEAD", in: "r1") == 0)
      try box.root.write("r1/todos/u.json", merged)
    }
    let status = try FolioRunner.run(["status"], in: box.root.path + "/r1")
    #expect(
      status.stdout.contains("stopped before its commit; 'folio commit' concludes it"), "\(status.stdout)")
    #expect(!status.stdout.contains("nothing to commit"), "\(status.stdout)")
    let concluded = try FolioRunner.run(["commit"], in: box.root.path + "/r1")
    #expect(concluded.status == 0, "\(concluded.stderr)")
    #expect(concluded.stdout.contains("concluded the stopped git merge"), "\(concluded.stdout)")
    #expect(!(try FolioRunner.run(["status"], in: box.root.path + "/r1")).stdout.contains("stopped before"))
    try box.folio(["sync", "--no-push"], in: "twin")

    // A remove beats the concurrent update; the other document still sums.
    #expect(box.file("r1/todos/t.json") == nil)
    #expect(box.file("twin/todos/t.json") == nil)
    let u = try #require(box.file("r1/todos/u.json"))
    #expect(u.contains(#""views": 8"#), "\(u)")
    #expect(u == box.file("twin/todos/u.json"))
    #expect(try box.git("rev-parse -q --verify MERGE_HEAD", in: "r1") != 0, "the git merge is still open")
    #expect(try box.git("rev-parse -q --verify HEAD^2", in: "r1") == 0)
    try box.expectConcludedLikeTwin()
    #expect(try box.git("push -q origin main", in: "r1") == 0)
  }

  /// git merges some paths cleanly while a stopped pull waits: a document
  /// the other side inserted, which this side inserted and then removed
  /// later, is added by git, but replay removes it. Concluding the merge
  /// puts git's clean verdicts right too, so nothing is left to look like
  /// an edit made outside Folio, and HEAD is the merge commit itself.
  @Test func concludingAStoppedPullAlsoReplaysWhatGitMergedCleanly() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"views": 1}"#])

    try box.folio(["rm", "todos", "t"], in: "r1")
    try box.folio(increment(3, tag: "b"), in: "r0")
    try box.folio(["put", "todos", "x", "-"], in: "r0", input: #"{"title": "theirs"}"#)
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    try box.folio(["put", "todos", "x", "-"], in: "r1", input: #"{"title": "ours"}"#)
    try box.folio(["rm", "todos", "x"], in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try FolioRunner.shell("cp -a r1 twin", in: box.root.path) == 0)
    let pull = try FolioRunner.shellOutput(
      "git pull --no-rebase --no-edit origin main", in: box.root.path + "/r1")
    #expect(pull.status != 0 && pull.output.contains("CONFLICT (modify/delete)"), "\(pull.output)")
    #expect(box.file("r1/todos/x.json") != nil, "git's merge added x: \(pull.output)")

    let concluded = try FolioRunner.run(["commit"], in: box.root.path + "/r1")
    #expect(concluded.status == 0, "\(concluded.stderr)")
    #expect(concluded.stdout.contains("concluded the stopped git merge"), "\(concluded.stdout)")
    #expect(!concluded.stdout.contains("outside Folio"), "\(concluded.stdout)")
    try box.folio(["sync", "--no-push"], in: "twin")
    // The latest op on x is r1's remove; on t, r1's remove beats the update.
    #expect(box.file("r1/todos/x.json") == nil)
    #expect(box.file("twin/todos/x.json") == nil)
    #expect(box.file("r1/todos/t.json") == nil)
    #expect(try box.git("rev-parse -q --verify HEAD^2", in: "r1") == 0, "HEAD is not the merge commit")
    try box.expectConcludedLikeTwin()
  }

  /// When a file outside the tables conflicts too, `folio commit` names it,
  /// says how to go on, and leaves git's merge as it was.
  @Test func stoppedPullWithConflictOutsideTablesIsLeftToGit() throws {
    let box = try Sandbox()
    defer { box.root.remove() }
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("r0/folio.yaml", Self.yaml)
    try box.root.write("r0/notes.txt", "one\n")
    try box.folio(["init"], in: "r0")
    try box.folio(["put", "todos", "t", "-"], in: "r0", input: #"{"views": 1}"#)
    try box.folio(["commit", "-m", "seed"], in: "r0")
    #expect(try box.git("add notes.txt", in: "r0") == 0)
    #expect(try box.git("commit -q -m notes", in: "r0") == 0)
    #expect(try box.git("remote add origin \(box.remote)", in: "r0") == 0)
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r1", in: box.root.path) == 0)
    try box.folio(["init"], in: "r1")
    for (replica, text) in [("r0", "two\n"), ("r1", "three\n")] {
      try box.root.write("\(replica)/notes.txt", text)
      #expect(try box.git("commit -q -a -m notes", in: replica) == 0)
    }
    try box.folio(["rm", "todos", "t"], in: "r0")
    try box.folio(increment(2, tag: "x"), in: "r1")
    try box.folio(["commit"], in: "r0")
    try box.folio(["commit"], in: "r1")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") != 0)
    let result = try FolioRunner.run(["commit"], in: box.root.path + "/r1")
    #expect(result.status == 1)
    #expect(result.stderr.contains("notes.txt still conflict"), "\(result.stderr)")
    #expect(result.stderr.contains("git commit"), "\(result.stderr)")
    #expect(try box.git("rev-parse -q --verify MERGE_HEAD", in: "r1") == 0, "git's merge state was dropped")
  }
}
