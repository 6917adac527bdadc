import FolioTestSupport
import Foundation
import Glibc
import Testing

@Suite struct CommitCLITests {
  @Test func statusAndCommitRecordEditsMadeOutsideFolio() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("put", "todos", "t", "-", input: #"{"views": 1, "tags": ["a"]}"#).status == 0)
    let first = try scratch.folio("commit", "-m", "first", "--json")
    #expect(first.status == 0)
    #expect(first.stdout.contains(#""documents":1"#))
    #expect(try scratch.folio("commit").stdout == "nothing to commit\n")
    // Edited in an editor with no watcher: a counter edit and a set edit.
    try scratch.write("data/todos/t.json", #"{"id": "t", "views": 4, "tags": ["a", "b"]}"#)
    // And a broken document, which is reported and left out.
    try scratch.write("data/todos/bad.json", "{\n  \"id\": \"bad\",\n  \"views\": 1,\n}\n")
    let status = try scratch.folio("status")
    #expect(status.status == 3)
    #expect(status.stdout.contains("edited outside Folio: t"))
    #expect(status.stderr.hasPrefix("data/todos/bad.json:3:13: warning: left out: trailing comma"))
    let commit = try scratch.folio("commit", "--json")
    #expect(commit.status == 3)
    #expect(commit.stdout.contains(#""syntheticOps":1"#))
    #expect(commit.stderr.hasPrefix("data/todos/bad.json:3:13: warning: left out: trailing comma"))
    let log = try scratch.folio("log", "todos", "t").stdout.split(separator: "\n")
    let last = try #require(log.last)
    #expect(last.contains(#""views":{"by":3,"op":"increment"}"#), "\(last)")
    #expect(last.contains(#""tags":{"op":"arrayUnion","values":["b"]}"#), "\(last)")
    // The broken file is untouched and still pending.
    #expect(scratch.read("data/todos/bad.json") == "{\n  \"id\": \"bad\",\n  \"views\": 1,\n}\n")
    let git = try FolioRunner.shell("git diff --quiet HEAD -- data/todos/t.json", in: scratch.path)
    #expect(git == 0)
  }

  /// git refuses a repository owned by someone else; libgit2 1.5 calls it
  /// "not found", which would send people to 'folio init'.
  @Test(.enabled(if: geteuid() == 0, "needs root to give the store away"))
  func aStoreOwnedByAnotherUserSaysHowToTrustIt() throws {
    let scratch = try CLIScratch()
    defer {
      _ = try? FolioRunner.shell("chown -R root .", in: scratch.path)
      scratch.remove()
    }
    #expect(try scratch.folio("init").status == 0)
    #expect(try FolioRunner.shell("chown -R nobody .", in: scratch.path) == 0)
    let home = scratch.path + "/.home"
    let refused = try FolioRunner.run(["status"], in: scratch.path, environment: ["HOME": home])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("is owned by another user"), "\(refused.stderr)")
    #expect(refused.stderr.contains("git config --global --add safe.directory \(scratch.path)"))
    // Following the advice works.
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    #expect(
      try FolioRunner.shell(
        "HOME='\(home)' git config --global --add safe.directory '\(scratch.path)'", in: scratch.path) == 0)
    let trusted = try FolioRunner.run(["status"], in: scratch.path, environment: ["HOME": home])
    #expect(trusted.status == 0, "\(trusted.stderr)")
  }

  @Test func syncWithoutARemoteSaysHowToAddOne() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let result = try scratch.folio("sync")
    #expect(result.status == 1)
    #expect(result.stderr.contains("no remote named 'origin'; add one with 'git remote add origin URL'"))
    let missing = try scratch.folio("sync", "elsewhere", "--bogus")
    #expect(missing.status == 64)
    #expect(missing.stderr.contains("Usage: folio sync"))
  }

  @Test func mergeDriverNeedsFourArguments() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let result = try scratch.folio("merge-driver", "a", "b")
    #expect(result.status == 64)
    let help = try scratch.folio("merge-driver", "--help")
    #expect(help.status == 0)
    #expect(help.stdout.contains("merge.folio.driver"))
  }
}
