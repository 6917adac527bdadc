import FolioTestSupport
import Foundation
import Testing

/// `folio evict` keeps git's index in step at once: plain git sees no
/// deletion between the eviction and the next `folio commit`.
@Suite struct EvictCLITests {
  @Test func plainGitSeesNoDeletionRightAfterEvict() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try box.root.write("s/folio.yaml", GitPullTests.yaml)
    try box.folio(["init"], in: "s")
    try box.folio(["put", "todos", "a", "-"], in: "s", input: #"{"views": 1}"#)
    try box.folio(["put", "todos", "b", "-"], in: "s", input: #"{"views": 2}"#)
    try box.folio(["commit", "-m", "seed"], in: "s")
    let store = box.root.path + "/s"

    try box.folio(["evict", "todos", "a"], in: "s")
    #expect(box.file("s/todos/a.json") == nil)
    let status = try FolioRunner.shellOutput("git status --porcelain", in: store)
    #expect(status.status == 0 && status.output.isEmpty, "git status shows: \(status.output)")
    let flags = try FolioRunner.shellOutput("git ls-files -v todos/a.json", in: store)
    #expect(flags.output.hasPrefix("S "), "a.json is not skip-worktree: \(flags.output)")
    // `git commit -a` finds nothing to commit, and HEAD still holds a.json.
    let commit = try FolioRunner.shellOutput("git commit -a -m 'by hand'", in: store)
    #expect(commit.status != 0, "git commit -a committed something: \(commit.output)")
    #expect(try FolioRunner.shellOutput("git cat-file -e HEAD:todos/a.json", in: store).status == 0)
    // Folio agrees: nothing changed, a is evicted.
    let folioStatus = try box.folio(["status"], in: "s")
    #expect(folioStatus.stdout.contains("0 changed document(s)"), "\(folioStatus.stdout)")
    #expect(folioStatus.stdout.contains("evicted: a"), "\(folioStatus.stdout)")

    // Written again, the document is visible to git again.
    try box.folio(["put", "todos", "a", "-"], in: "s", input: #"{"views": 5}"#)
    let after = try FolioRunner.shellOutput("git status --porcelain todos", in: store)
    #expect(after.output.contains("M todos/a.json"), "git does not see the rewrite: \(after.output)")
    #expect(try FolioRunner.shellOutput("git ls-files -v todos/a.json", in: store).output.hasPrefix("H "))
  }

  /// `kill -9` at random moments of `folio evict`: once the store is next
  /// opened, git never sees an evicted document as deleted.
  @Test func killNineDuringEvictNeverLeavesADeletionForGit() throws {
    let seed = testSeed()
    var random = SplitMix(seed: seed)
    let box = try GitPullTests.Sandbox(context: "seed \(seed)")
    defer { box.root.remove() }
    try box.root.write("s/folio.yaml", GitPullTests.yaml)
    try box.folio(["init"], in: "s")
    let store = box.root.path + "/s"
    for round in 0..<8 {
      let pk = "k\(round % 3)"
      try box.folio(["put", "todos", pk, "-"], in: "s", input: #"{"views": \#(round)}"#)
      try box.folio(["commit"], in: "s")
      let process = Process()
      process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
      process.arguments = ["evict", "todos", pk]
      process.currentDirectoryURL = URL(fileURLWithPath: store)
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      pause(seconds: Double(random.next() % 40_000) / 1e6)
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      try box.folio(["status"], in: "s")  // opens the store: finishes what was cut off
      let status = try FolioRunner.shellOutput("git status --porcelain todos", in: store)
      #expect(
        !status.output.contains(" D "), "seed \(seed) round \(round): git sees a deletion: \(status.output)")
    }
  }

  /// An eviction of a document git does not track (never committed) leaves
  /// the index alone.
  @Test func evictOfUntrackedDocumentLeavesIndexAlone() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try box.root.write("s/folio.yaml", GitPullTests.yaml)
    try box.folio(["init"], in: "s")
    try box.folio(["commit", "-m", "seed"], in: "s")
    try box.folio(["put", "todos", "n", "-"], in: "s", input: #"{"views": 1}"#)
    try box.folio(["evict", "todos", "n"], in: "s")
    let files = try FolioRunner.shellOutput("git ls-files todos", in: box.root.path + "/s")
    #expect(files.output.isEmpty, "\(files.output)")
  }
}
