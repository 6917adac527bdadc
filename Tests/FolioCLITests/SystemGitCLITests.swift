import FolioTestSupport
import Foundation
import Testing

/// Folio fetches and pushes with the system git: one too old, or none at
/// all, is a clear error that says what to install, and nothing changes.
@Suite struct SystemGitCLITests {
  /// A store with a remote, and a folder for stand-in programs.
  private func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: nil)
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    try scratch.write("a/folio.yaml", GitPullTests.yaml)
    #expect(try FolioRunner.run(["init"], in: scratch.path + "/a").status == 0)
    #expect(
      try FolioRunner.shell("git remote add origin \(scratch.path)/remote.git", in: scratch.path + "/a") == 0)
    try FileManager.default.createDirectory(atPath: scratch.path + "/bin", withIntermediateDirectories: true)
    return scratch
  }

  @Test func anOldGitIsRefusedWithTheVersionNeeded() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("bin/git", "#!/bin/sh\necho 'git version 2.20.1'\n")
    chmod(scratch.path + "/bin/git", 0o755)
    let result = try FolioRunner.run(
      ["sync"], in: scratch.path + "/a", environment: ["PATH": scratch.path + "/bin:/usr/bin:/bin"])
    #expect(result.status == 1)
    for expected in ["REMOTE", "git 2.31 or later", "git version 2.20.1", "upgrade git"] {
      #expect(result.stderr.contains(expected), "\(expected) in \(result.stderr)")
    }
    #expect(try scratch.git("--git-dir=remote.git rev-list --all").isEmpty, "nothing was pushed")
  }

  @Test func noGitOnPathSaysWhatToInstall() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let result = try FolioRunner.run(
      ["sync"], in: scratch.path + "/a", environment: ["PATH": scratch.path + "/bin"])
    #expect(result.status == 1)
    for expected in ["REMOTE", "no 'git' on PATH", "install git"] {
      #expect(result.stderr.contains(expected), "\(expected) in \(result.stderr)")
    }
  }

  /// git's progress shows on stderr only when it is a terminal: `script`
  /// gives folio one, as a person at a shell would have.
  @Test func progressShowsOnlyOnATerminal() throws {
    let scratch = try store()
    defer { scratch.remove() }
    for i in 0..<300 {
      try scratch.write("a/todos/d\(i).json", "{\n  \"id\": \"d\(i)\",\n  \"n\": \(i)\n}\n")
    }
    #expect(try FolioRunner.run(["sync"], in: scratch.path + "/a").status == 0)
    let url = "file://" + scratch.path + "/remote.git"
    let plain = try FolioRunner.run(["clone", url, "b"], in: scratch.path)
    #expect(plain.status == 0, "\(plain.stderr)")
    #expect(!plain.stderr.contains("Receiving objects"), "\(plain.stderr)")

    let command = "'\(FolioRunner.binary)' clone '\(url)' c"
    let onTerminal = try FolioRunner.shellOutput(
      "script -qec \"\(command)\" /dev/null </dev/null", in: scratch.path)
    #expect(onTerminal.status == 0, "\(onTerminal.output)")
    #expect(onTerminal.output.contains("Receiving objects"), "\(onTerminal.output)")
    #expect(FileManager.default.fileExists(atPath: scratch.path + "/c/todos/d299.json"))
  }
}
