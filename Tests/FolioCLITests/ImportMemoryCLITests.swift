import FolioTestSupport
import Foundation
import Glibc
import Testing

/// Memory stays flat as the file grows. Runs the built `folio
/// import` on a generated NDJSON stream fed through a pipe, at two sizes,
/// and compares the peak RSS the kernel reports for it (`wait4`). The rows
/// are few and fat, so per-row bookkeeping (a name and a 20-byte id per
/// document) stays small next to the input. `FOLIO_BIG_STREAM=1` runs the
/// larger size at 1 GB.
///
/// The imports run with `--no-commit`: the pack is written row by row as
/// well, but a debug build hashes and deflates it slowly (5 s for 16 MB),
/// which would blow the test's time budget. `FOLIO_STREAM_COMMIT=1` adds
/// the commit.
struct ImportMemoryCLITests {
  /// One row's body: 64 fields of 4 KB of text, about 256 KB.
  static let fields = 64
  static let fieldBytes = 4096

  /// The peak RSS in MB of `folio import` reading `megabytes` of rows from a
  /// pipe, its exit status, and the rows sent.
  private func peakRSS(megabytes: Int, commit: Bool, in scratch: CLIScratch, table: String) throws -> (
    status: Int32, megabytes: Double, rows: Int
  ) {
    var row: [UInt8] = []
    for f in 0..<Self.fields {
      row += Array(",\"f\(f)\":\"".utf8)
      // Varied text, so the pack's deflate has real work, but cheap to make.
      for k in 0..<Self.fieldBytes { row.append(UInt8(ascii: "a") + UInt8((k * 7 + f) % 26)) }
      row.append(UInt8(ascii: "\""))
    }
    row += Array("}\n".utf8)
    let rows = megabytes * 1_048_576 / row.count

    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    posix_spawn_file_actions_addclose(&actions, fds[1])
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let arguments =
      [FolioRunner.binary, "-C", scratch.path, "import", table, "-", "--format", "ndjson"]
      + (commit ? ["-m", "big stream"] : ["--no-commit"])
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, FolioRunner.binary, &actions, nil, argv, environ)
    close(fds[0])
    try #require(spawned == 0)
    // A folio that dies early must fail the test, not kill it with SIGPIPE.
    let oldHandler = signal(SIGPIPE, SIG_IGN)
    defer { signal(SIGPIPE, oldHandler) }
    func send(_ bytes: [UInt8]) -> Bool {
      bytes.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count {
          let n = write(fds[1], raw.baseAddress! + done, raw.count - done)
          if n < 0 && errno == EINTR { continue }
          if n <= 0 { return false }
          done += n
        }
        return true
      }
    }
    // The id, then the shared body: no copy of the body per row (an array
    // concatenation in a debug build costs more than the import).
    var written = true
    for i in 0..<rows where written {
      written = send(Array("{\"id\":\"r\(i)\"".utf8)) && send(row)
    }
    close(fds[1])
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    #expect(written, "folio stopped reading its input")
    // Linux reports ru_maxrss in kilobytes.
    return ((status >> 8) & 0xff, Double(usage.ru_maxrss) / 1024, rows)
  }

  @Test func peakMemoryGrowsFarLessThanTheInput() throws {
    let scratch = try CLIScratch(
      yaml: "version: 1\ntables:\n  small:\n    path: small\n  large:\n    path: large\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let environment = ProcessInfo.processInfo.environment
    let big = environment["FOLIO_BIG_STREAM"] == "1"
    let commit = environment["FOLIO_STREAM_COMMIT"] == "1"
    let smallSize = 16
    let largeSize = big ? 1024 : 128
    let small = try peakRSS(megabytes: smallSize, commit: commit, in: scratch, table: "small")
    let large = try peakRSS(megabytes: largeSize, commit: commit, in: scratch, table: "large")
    #expect(small.status == 0 && large.status == 0)
    let growth = large.megabytes - small.megabytes
    print(
      String(
        format: "import peak RSS: %.1f MB for %d MB of input, %.1f MB for %d MB (grew %.1f MB)",
        small.megabytes, smallSize, large.megabytes, largeSize, growth))
    // Far less than the input grew: under a tenth of it.
    #expect(growth < Double(largeSize - smallSize) / 10, "peak RSS grew \(growth) MB")
    let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/large")
    #expect(files.filter { $0.hasSuffix(".json") }.count == large.rows)
  }
}
