import FolioTestSupport
import Foundation
import Testing

/// `folio sync` follows the branch's upstream (`branch.<name>.remote` and
/// `.merge`) as `git pull` and `git push` do.
@Suite struct SyncUpstreamCLITests {
  @Test func syncFetchesAndPushesTheUpstreamBranchOfItsRemote() throws {
    let root = try CLIScratch(yaml: nil)
    defer { root.remove() }
    func run(_ command: String, in replica: String) throws -> String {
      let result = try FolioRunner.shellOutput(command, in: root.path + "/" + replica)
      #expect(result.status == 0, "\(command): \(result.output)")
      return result.output
    }
    func folio(_ arguments: [String], in replica: String, input: String? = nil) throws -> FolioRunner.Result {
      let result = try FolioRunner.run(arguments, in: root.path + "/" + replica, input: input)
      #expect(result.status == 0, "folio \(arguments.joined(separator: " ")): \(result.stderr)")
      return result
    }
    let increment = { (by: Int) in
      [
        "apply", "todos", "t", "--op", "update", "--transforms",
        #"{"views": {"op": "increment", "by": \#(by)}}"#,
      ]
    }

    _ = try run("git init -q --bare remote.git", in: ".")
    try root.write("a/folio.yaml", GitPullTests.yaml)
    _ = try folio(["init"], in: "a")
    _ = try folio(["put", "todos", "t", "-"], in: "a", input: #"{"views": 1}"#)
    _ = try run("git remote add origin ../remote.git", in: "a")
    _ = try folio(["sync"], in: "a")

    // b works on a branch named `work` whose upstream is `central/main`:
    // no remote is called origin, and no remote branch is called work.
    _ = try run("git clone -q -b main remote.git b", in: ".")
    _ = try folio(["init"], in: "b")
    _ = try run("git remote rename origin central", in: "b")
    _ = try run("git checkout -q -b work --track central/main", in: "b")

    _ = try folio(increment(10), in: "a")
    _ = try folio(["sync"], in: "a")
    _ = try folio(increment(100), in: "b")
    let synced = try folio(["sync", "--json"], in: "b")
    #expect(synced.stdout.contains(#""action":"merged""#), "\(synced.stdout)")
    #expect(synced.stdout.contains(#""pushed":true"#), "\(synced.stdout)")
    // A fetch and a push ran git: their time is reported, and is not zero.
    let transfer = synced.stdout.firstMatch(of: /"transfer_seconds":([0-9.]+)/).flatMap { Double($0.1) }
    #expect((transfer ?? 0) > 0, "\(synced.stdout)")

    let heads = try run("git ls-remote --heads remote.git", in: ".")
    #expect(!heads.contains("refs/heads/work"), "no new branch was pushed: \(heads)")
    let remoteMain = try run("git rev-parse main", in: "remote.git")
    let local = try run("git rev-parse work", in: "b")
    #expect(remoteMain == local, "the push went to the upstream branch")

    _ = try folio(["sync"], in: "a")
    #expect(root.read("a/todos/t.json")?.contains(#""views": 111"#) == true)

    // A remote named on the command line that is not the upstream's: the
    // branch of the same name, as `git pull REMOTE` without a refspec
    // would not guess otherwise.
    _ = try run("git init -q --bare other.git", in: ".")
    _ = try run("git remote add other ../other.git", in: "b")
    _ = try folio(["sync", "other"], in: "b")
    let otherHeads = try run("git ls-remote --heads other.git", in: ".")
    #expect(otherHeads.contains("refs/heads/work"), "\(otherHeads)")
  }
}
