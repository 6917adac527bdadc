import FolioTestSupport
import Foundation
import Testing

/// `kill -9` of `folio sync` while it merges: at a random moment, and (with
/// the library's test-only `FOLIO_TEST_PAUSE_AT` stop) for certain right
/// after the merge commit is written and half way through the checkout.
/// Afterwards every file is whole, rerunning `sync` finishes the job, and no
/// increment is lost or counted twice.
@Suite struct SyncCrashTests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: todos
        columns:
          views: counter
    """

  @Test func killNineDuringSyncThenRerunFinishes() throws {
    let seed = testSeed()
    var random = SplitMix(seed: seed)
    let box = try GitPullTests.Sandbox(context: "seed \(seed)")
    defer { box.root.remove() }
    let pks = (0..<40).map { "d\($0)" }
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("a/folio.yaml", Self.yaml)
    try box.folio(["init"], in: "a")
    for pk in pks { try box.folio(["put", "todos", pk, "-"], in: "a", input: #"{"views": 0}"#) }
    #expect(try box.git("remote add origin \(box.remote)", in: "a") == 0, "seed \(seed)")
    try box.folio(["sync"], in: "a")
    try box.folio(["clone", box.remote, "b"], in: "")
    var expected = 0
    for round in 0..<6 {
      // Both sides raise every counter; a publishes, b merges and is killed.
      for (replica, amount) in [("a", 1), ("b", 10)] {
        for pk in pks.shuffled(using: &random).prefix(10) {
          try box.folio(
            [
              "apply", "todos", pk, "--op", "update", "--transforms",
              #"{"views":{"op":"increment","by":\#(amount)}}"#,
            ],
            in: replica)
          expected += amount
        }
      }
      try box.folio(["sync"], in: "a")
      // Two rounds each: a random moment, right after the merge commit,
      // half way through the checkout.
      let pause: String? = [nil, "merge", "checkout"][round % 3]
      let marker = box.root.path + "/b/.git/folio/test-paused"
      let journal = box.root.path + "/b/.git/folio/checkout"
      try? FileManager.default.removeItem(atPath: marker)
      let process = Process()
      process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
      process.arguments = ["sync"]
      process.currentDirectoryURL = URL(fileURLWithPath: box.root.path + "/b")
      if let pause {
        process.environment = ProcessInfo.processInfo.environment.merging(["FOLIO_TEST_PAUSE_AT": pause]) {
          $1
        }
      }
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      if let pause {
        eventually(timeout: 30) { FileManager.default.fileExists(atPath: marker) || !process.isRunning }
        #expect(
          FileManager.default.fileExists(atPath: marker),
          "seed \(seed) round \(round): sync never reached \(pause)")
        if pause == "checkout" {
          // Half way: a document already holds the merge, but git's index
          // and HEAD do not.
          let status = try FolioRunner.shellOutput("git status --porcelain todos", in: box.root.path + "/b")
          #expect(!status.output.isEmpty, "seed \(seed) round \(round): nothing written before the pause")
          // What a kill between a swap and its unlink leaves: the file
          // already holds the merge, its temp name the content it replaced.
          let line = try #require(
            status.output.split(separator: "\n").first { $0.hasPrefix(" M ") },
            "seed \(seed) round \(round): no document written before the pause")
          let path = String(line.dropFirst(3))
          let old = try FolioRunner.shellOutput("git show HEAD:\(path)", in: box.root.path + "/b")
          let name = String(path.split(separator: "/").last!)
          try box.root.write("b/todos/.\(name).folio-tmp", old.output)
        }
      } else {
        FolioTestSupport.pause(seconds: Double(random.next() % 150_000) / 1e6)
      }
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      if let pause {
        // Killed mid-merge: the merge commit exists but HEAD is b's own
        // commit; mid-checkout, the journal is there to finish from.
        #expect(try box.git("rev-parse -q --verify HEAD^2", in: "b") != 0, "seed \(seed): HEAD moved")
        #expect(
          FileManager.default.fileExists(atPath: journal) == (pause == "checkout"),
          "seed \(seed) round \(round): the checkout journal, killed at \(pause)")
      }
      // Every document is whole, even before anything is repaired.
      for pk in pks {
        let text = try #require(box.file("b/todos/\(pk).json"), "seed \(seed) round \(round): \(pk) missing")
        #expect(!text.contains("<<<<<<<"), "seed \(seed)")
        #expect(text.hasSuffix("}\n") || text.hasSuffix("}"), "seed \(seed): \(pk) torn: \(text)")
      }
      let rerun = try FolioRunner.run(["sync"], in: box.root.path + "/b")
      #expect(rerun.status == 0, "seed \(seed) round \(round): rerun failed: \(rerun.stderr)")
      #expect(
        !FileManager.default.fileExists(atPath: journal), "seed \(seed): the checkout was never finished")
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: box.root.path + "/b/todos")
        .filter { $0.hasSuffix(".folio-tmp") }
      #expect(leftovers.isEmpty, "seed \(seed) round \(round): temp files left: \(leftovers)")
    }
    try box.folio(["sync"], in: "a")
    var total = 0
    for pk in pks {
      let a = try #require(box.file("a/todos/\(pk).json"), "seed \(seed): \(pk) missing in a")
      #expect(a == box.file("b/todos/\(pk).json"), "seed \(seed): \(pk) differs")
      if let range = a.range(of: #""views": "#) {
        total += Int(a[range.upperBound...].prefix { $0.isNumber || $0 == "-" }) ?? 0
      }
    }
    #expect(total == expected, "seed \(seed): counters sum to \(total), increments to \(expected)")
    #expect(try box.git("diff --quiet HEAD", in: "b") == 0, "seed \(seed): b has uncommitted changes")
  }
}
