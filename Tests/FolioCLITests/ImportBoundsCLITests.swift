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
  /// status, stderr and peak RSS in MB (from `wait4`).
  static func runMeasured(_ arguments: [String], in directory: String) throws -> (
    status: Int32, stderr: String, megabytes: Double
  ) {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    posix_spawn_file_actions_addclose(&actions, fds[1])
    let argv = ([FolioRunner.binary, "-C", directory] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, FolioRunner.binary, &actions, nil, argv, environ)
    close(fds[1])
    try #require(spawned == 0)
    var text: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = read(fds[0], &buffer, buffer.count)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      text += buffer[0..<n]
    }
    close(fds[0])
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    return ((status >> 8) & 0xff, String(decoding: text, as: UTF8.self), Double(usage.ru_maxrss) / 1024)
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
