import FolioTestSupport
import Foundation
import Testing

struct ConcurrencyAndCrashTests {
  /// Two processes hammering one document through the CLI lose no increment.
  @Test func twoProcessesLoseNoIncrement() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let perProcess = 40
    let script = """
      for i in $(seq 1 \(perProcess)); do
        "\(FolioRunner.binary)" apply todos hot --op upsert --transforms '{"views":{"op":"increment","by":1}}' >/dev/null || exit 1
      done
      """
    // Two real processes, each a shell loop of CLI calls, running at once.
    let loops = try (0..<2).map { _ in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", script]
      process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
      try process.run()
      return process
    }
    for loop in loops { loop.waitUntilExit() }
    let status = loops.map(\.terminationStatus).max()!
    #expect(status == 0)
    let doc = try scratch.folio("get", "todos", "hot")
    #expect(doc.stdout.contains("\"views\": \(2 * perProcess)"), "\(doc.stdout)")
    #expect(try scratch.folio("log", "todos", "hot").stdout.split(separator: "\n").count == 2 * perProcess)
  }

  /// `kill -9` at random moments of a stream of writes: every file stays
  /// valid JSON, and after reopening the op log and documents agree.
  @Test func killNineMidWrite() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let seed = testSeed()
    var random = SplitMix(seed: seed)
    for round in 0..<60 {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
      let pk = "k\(round % 3)"
      process.arguments = [
        "apply", "todos", pk, "--op", "upsert", "--columns", #"{"round": \#(round)}"#,
        "--transforms",
        #"{"views":{"op":"increment","by":1},"tags":{"op":"arrayUnion","values":[\#(round)]}}"#,
      ]
      process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      pause(seconds: Double(random.next() % 30_000) / 1e6)
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    // Every document file is whole, valid JSON, even before recovery.
    let folder = scratch.path + "/data/todos"
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    where !name.hasPrefix(".") {
      let get = try scratch.folio("get", "todos", String(name.dropLast(5)))
      #expect(get.status == 0, "seed \(seed): \(name): \(get.stderr)")
    }
    // One more write reopens the store (repairing what it must); then the
    // log and the documents agree: views == number of logged increments.
    let reopened = try scratch.folio("apply", "todos", "k0", "--op", "upsert")
    #expect(reopened.status == 0, "seed \(seed): \(reopened.stderr)")
    let fsck = try scratch.folio("fsck")
    #expect(fsck.status == 0, "seed \(seed): \(fsck.stdout)\(fsck.stderr)")
    let log = try scratch.folio("log", "todos").stdout.split(separator: "\n")
    for pk in ["k0", "k1", "k2"] {
      let increments = log.filter { $0.contains(#""pk":"\#(pk)""#) && $0.contains("increment") }.count
      let doc = try scratch.folio("get", "todos", pk)
      if increments == 0 {
        #expect(doc.status == 1 || !doc.stdout.contains("views"), "seed \(seed)")
      } else {
        #expect(
          doc.stdout.contains("\"views\": \(increments)\n"),
          "seed \(seed): \(pk): \(doc.stdout) vs \(increments)")
      }
    }
  }
}
