import FolioTestSupport
import Foundation
import Glibc
import Testing

/// An import's input is bounded and stoppable: an endless line or field is
/// refused once it passes the store's document limit, with memory flat,
/// and SIGTERM ends an import still waiting for a writer.
struct ImportBoundsCLITests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: data/t\nlimits:\n  document: 1M\n"

  /// Runs `folio ARGUMENTS` in `directory` and waits, returning its exit
  /// status, stderr and peak RSS in MB. Python starts it and reads the
  /// peak from `getrusage(RUSAGE_CHILDREN)`: a child the test process
  /// spawned itself would report the test process's own peak, which Linux
  /// carries into a `vfork`ed child's `exec`.
  static func runMeasured(_ arguments: [String], in directory: String) throws -> (
    status: Int32, stderr: String, megabytes: Double
  ) {
    let measure = """
      import resource, subprocess, sys
      done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
      sys.stderr.buffer.write(done.stderr)
      print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
      """
    let result = try FolioRunner.execute(
      PublicData.python, ["-c", measure, FolioRunner.binary, "-C", directory] + arguments, in: directory)
    let fields = result.stdout.split(separator: " ").map {
      $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    try #require(fields.count == 2, "\(result.stdout) \(result.stderr)")
    return (Int32(fields[0]) ?? -1, result.stderr, (Double(fields[1]) ?? .infinity) / 1024)
  }

  @Test(arguments: ["ndjson", "csv", "json"])
  func anEndlessRecordIsRefusedWithMemoryFlat(_ format: String) throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    // /dev/zero never ends a line or a field; a JSON array's first element
    // that is a string never closed does the same for JSON.
    var input = "/dev/zero"
    if format == "json" {
      input = scratch.path + "/open.json"
      try scratch.write("open.json", "[\"" + String(repeating: "x", count: 6 << 20))
    }
    let result = try Self.runMeasured(["import", "t", input, "--format", format], in: scratch.path)
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stderr.hasPrefix("error: TOO_LARGE: \(input): "), "\(result.stderr)")
    #expect(result.stderr.contains("runs past 2M"), "\(result.stderr)")
    // The limit is 1 MB: the window holds at most a few times that.
    #expect(result.megabytes < 150, "peak RSS \(result.megabytes) MB")
    #expect(try scratch.folio("fsck").status == 0)
    #expect(try scratch.folio("query", "t", "--count").stdout == "0\n")
  }

  @Test func aHugeCSVFieldIsRefusedAtTheLimit() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let field = String(repeating: "x", count: 3 << 20)
    try scratch.write("big.csv", "id,text\na,\"\(field)\"\nb,small\n")
    let result = try Self.runMeasured(["import", "t", "big.csv"], in: scratch.path)
    #expect(result.status == 1 && result.stderr.contains("TOO_LARGE"), "\(result.stderr)")
    #expect(try scratch.folio("query", "t", "--count").stdout == "0\n")
    // A line of nothing but separators: empty fields count too.
    try scratch.write("commas.csv", "id,text\n" + String(repeating: ",", count: 3 << 20) + "\n")
    let commas = try Self.runMeasured(["import", "t", "commas.csv"], in: scratch.path)
    #expect(commas.status == 1, "\(commas.stderr)")
    #expect(commas.stderr.contains("the record of line 2 runs past 2M"), "\(commas.stderr)")
    #expect(commas.megabytes < 150, "peak RSS \(commas.megabytes) MB")
  }

  /// SIGTERM to an import waiting for a FIFO's writer: it stops, says
  /// nothing was imported, and exits 130; the store is as it was.
  @Test func sigtermEndsAnImportWaitingForInput() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let fifo = scratch.path + "/in.ndjson"
    #expect(mkfifo(fifo, 0o600) == 0)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    process.arguments = ["import", "t", fifo]
    process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
    let stderr = Pipe()
    process.standardError = stderr
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    // The state to wait for: blocked opening the FIFO, as no writer comes.
    let pid = process.processIdentifier
    let waiting = eventually {
      (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) == "wait_for_partner"
    }
    #expect(waiting)
    kill(pid, SIGTERM)
    process.waitUntilExit()
    let text = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(text)")
    #expect(text.contains("interrupted while waiting for input; nothing was imported"), "\(text)")
    #expect(try scratch.folio("query", "t", "--count").stdout == "0\n")
    #expect(try scratch.folio("status").stdout.contains("nothing to commit"))
  }
}
