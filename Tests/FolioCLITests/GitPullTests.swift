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
    init() throws { root = try CLIScratch(yaml: nil) }
    var remote: String { root.path + "/remote.git" }

    @discardableResult
    func git(_ command: String, in replica: String) throws -> Int32 {
      let environment =
        "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t"
      return try FolioRunner.shell(
        "env \(environment) git \(command) >/dev/null 2>&1", in: root.path + "/" + replica)
    }

    @discardableResult
    func folio(_ arguments: [String], in replica: String, input: String? = nil) throws -> FolioRunner.Result {
      let result = try FolioRunner.run(arguments, in: root.path + "/" + replica, input: input)
      #expect(result.status == 0, "folio \(arguments.joined(separator: " ")) in \(replica): \(result.stderr)")
      return result
    }

    func file(_ relative: String) -> String? { root.read(relative) }
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
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("r0/folio.yaml", Self.yaml)
    try box.folio(["init"], in: "r0")
    try box.folio(["put", "todos", "t", "-"], in: "r0", input: #"{"views": 1, "tags": ["a"], "title": "x"}"#)
    try box.folio(["commit", "-m", "seed"], in: "r0")
    #expect(try box.git("remote add origin \(box.remote)", in: "r0") == 0)
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    // r1: a plain clone where only `folio init` ran.
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r1", in: box.root.path) == 0)
    try box.folio(["init"], in: "r1")
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
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("r0/folio.yaml", Self.yaml)
    try box.folio(["init"], in: "r0")
    try box.folio(["put", "todos", "t", "-"], in: "r0", input: #"{"views": 1, "tags": ["a", "b"]}"#)
    try box.folio(["commit", "-m", "seed"], in: "r0")
    #expect(try box.git("remote add origin \(box.remote)", in: "r0") == 0)
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    #expect(try FolioRunner.shell("git clone -q -b main remote.git r1", in: box.root.path) == 0)
    try box.folio(["init"], in: "r1")
    let hook = try #require(box.file("r1/.git/hooks/post-merge"))
    #expect(hook.contains("merge-driver --post-merge"))

    let remove = #"{"tags": {"op": "arrayRemove", "values": ["a"]}}"#
    try box.folio(["apply", "todos", "t", "--op", "update", "--transforms", remove], in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    usleep(20_000)  // r1's op comes later, by the clock too
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
}
