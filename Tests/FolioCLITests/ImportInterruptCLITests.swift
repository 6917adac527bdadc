import FolioTestSupport
import Foundation
import Testing

/// Ctrl-C (SIGINT) during `folio import`: before the durability point the
/// import stops and the table is exactly as before; after it, the import
/// finishes. Either way the store stays consistent and a rerun completes.
struct ImportInterruptCLITests {
  static let yaml = """
    version: 1
    tables:
      items:
        path: data/items
    """
  static let count = 2500

  private func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("put", "items", "keep", input: #"{"v":-1}"#).status == 0)
    #expect(try scratch.folio("commit").status == 0)
    var text = ""
    for i in 0..<Self.count {
      text +=
        #"{"id":"r\#(i)","v":\#(i),"s":"\#(String(repeating: "y", count: 40))","n":{"k":[\#(i),null]}}"#
        + "\n"
    }
    try scratch.write("big.ndjson", text)
    return scratch
  }

  /// Starts `folio import items big.ndjson`, its stderr going to a file.
  private func startImport(_ scratch: CLIScratch) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    process.arguments = ["import", "items", "big.ndjson"]
    process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
    _ = FileManager.default.createFile(atPath: scratch.path + "/stderr.txt", contents: nil)
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle(forWritingAtPath: scratch.path + "/stderr.txt")
    try process.run()
    return process
  }

  private func rows(_ scratch: CLIScratch, _ context: String = "") throws -> Int {
    let result = try scratch.folio("export", "items")
    #expect(result.status == 0, "\(context)\(result.stderr)")
    return result.stdout.split(separator: "\n").count
  }

  /// The store is consistent: fsck passes, nothing is pending, git agrees.
  private func expectConsistent(_ scratch: CLIScratch, _ context: String) throws {
    let fsck = try scratch.folio("fsck")
    #expect(fsck.status == 0, "\(context): \(fsck.stdout) \(fsck.stderr)")
    let status = try scratch.folio("status", "--json")
    #expect(
      status.status == 0 && status.stdout.contains(#""changed":[]"#)
        && status.stdout.contains(#""pendingOps":0"#)
        && !status.stdout.contains("problem"), "\(context): \(status.stdout)")
    #expect(try scratch.git("status --porcelain --untracked-files=no").isEmpty, "\(context)")
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.git/folio/import"), "\(context)")
  }

  @Test func sigintWhileStagingLeavesTheTableAsItWas() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let head = try scratch.git("rev-parse HEAD")
    let process = try startImport(scratch)
    // Wait until rows are being staged, then interrupt.
    let staging = scratch.path + "/.git/folio/import/docs"
    eventually(timeout: 60) {
      !process.isRunning
        || ((try? FileManager.default.contentsOfDirectory(atPath: staging))?.count ?? 0) >= 50
    }
    #expect(process.isRunning, "the import ended before it could be interrupted")
    kill(process.processIdentifier, SIGINT)
    process.waitUntilExit()
    let stderr = scratch.read("stderr.txt") ?? ""
    #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(stderr)")
    #expect(stderr.contains("error: INTERRUPTED: interrupted after"), "\(stderr)")
    #expect(stderr.contains("nothing was imported; table 'items' is as it was"), "\(stderr)")
    #expect(try rows(scratch) == 1)
    #expect(try scratch.folio("log", "items").stdout.split(separator: "\n").count == 1)
    // The import added nothing, not even a commit.
    #expect(try scratch.git("rev-parse HEAD") == head)
    try expectConsistent(scratch, "after SIGINT")

    let rerun = try scratch.folio("import", "items", "big.ndjson")
    #expect(rerun.status == 0, "\(rerun.stderr)")
    #expect(rerun.stdout.contains("\(Self.count) created"))
    #expect(try rows(scratch) == Self.count + 1)
    try expectConsistent(scratch, "after the rerun")
    #expect(try scratch.git("ls-files data/items").split(separator: "\n").count == Self.count + 1)
  }

  /// SIGINT at random moments: each run either stops with the table as
  /// before (130) or, past the durability point, finishes (0); a rerun
  /// completes. `FOLIO_TEST_SEED` replays a failure.
  @Test func sigintAtRandomMomentsThenRerun() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let seed = testSeed()
    var state = seed
    for round in 0..<2 {
      let process = try startImport(scratch)
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      pause(seconds: Double(100_000 + (state >> 33) % 1_500_000) / 1e6)
      kill(process.processIdentifier, SIGINT)
      process.waitUntilExit()
      let stderr = scratch.read("stderr.txt") ?? ""
      let present = try rows(scratch, "seed \(seed), round \(round): ")
      let context =
        "seed \(seed), round \(round): status \(process.terminationStatus), \(present) rows; \(stderr)"
      if process.terminationReason == .exit && process.terminationStatus == 130 {
        #expect(present == 1, "\(context)")
      } else if process.terminationReason == .exit && process.terminationStatus == 0 {
        #expect(present == Self.count + 1, "\(context)")
      } else {
        // The signal came before the handler was installed: as good as a kill.
        #expect(present == 1 || present == Self.count + 1, "\(context)")
      }
      try expectConsistent(scratch, context)
      if present == Self.count + 1 { break }
    }
    let rerun = try scratch.folio("import", "items", "big.ndjson")
    #expect(rerun.status == 0, "seed \(seed): \(rerun.stderr)")
    #expect(try rows(scratch, "seed \(seed): ") == Self.count + 1, "seed \(seed)")
    try expectConsistent(scratch, "seed \(seed), rerun")
    #expect(
      try scratch.git("ls-files data/items").split(separator: "\n").count == Self.count + 1,
      "seed \(seed)")
  }
}
