import Foundation
import Glibc

// `folio-bench import`: `folio import`/`folio export` against
// `sqlite-utils insert`/`rows` (installed into a venv under .build) and a
// naive pipeline (one pretty JSON file per row, then `git add -A && git
// commit`), on a generated flight table, in one run. Prints medians,
// ratios and peak RSS.

struct ImportBenchOptions {
  var rows = 336_776
  var runs = 1
  var naive = true
  var work = FileManager.default.currentDirectoryPath + "/.build/bench-import"

  init(_ arguments: [String]) {
    var i = 0
    while i < arguments.count {
      switch arguments[i] {
      case "--rows":
        i += 1
        rows = Int(arguments[i])!
      case "--runs":
        i += 1
        runs = Int(arguments[i])!
      case "--no-naive": naive = false
      case "--work":
        i += 1
        work = arguments[i]
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench import [--rows N] [--runs N] [--no-naive] [--work DIR]
            --rows N     rows in the generated flight table (default 336776)
            --runs N     repetitions of each timed step; medians are printed (default 1)
            --no-naive   skip the one-file-per-row + git pipeline (slow: minutes)
            --work DIR   scratch folder (default .build/bench-import)
          """)
        exit(0)
      default: fatalError("unknown option \(arguments[i]); see folio-bench import --help")
      }
      i += 1
    }
  }
}

/// Wall seconds and peak RSS (MB) of one child process.
struct RunResult {
  var seconds: Double
  var peakMB: Double
}

/// Runs a shell command under `/usr/bin/time` (a fresh, small process, so
/// the peak RSS it reports is the command's and not inherited from this
/// one), and fails loudly on a non-zero exit.
func runMeasured(_ command: String, in directory: String, quiet: Bool = true) -> RunResult {
  let script = NSTemporaryDirectory() + "/folio-bench-\(getpid()).sh"
  let rssFile = script + ".rss"
  let body = "cd '\(directory)' && (" + command + ")" + (quiet ? " >/dev/null 2>&1" : "") + "\n"
  try! body.write(toFile: script, atomically: true, encoding: .utf8)
  defer {
    unlink(script)
    unlink(rssFile)
  }
  var pid: pid_t = 0
  let argv: [UnsafeMutablePointer<CChar>?] = [
    strdup("/usr/bin/time"), strdup("-f"), strdup("%M"), strdup("-o"), strdup(rssFile), strdup("/bin/sh"),
    strdup(script), nil,
  ]
  defer { for p in argv { free(p) } }
  let start = benchNow()
  let rc = posix_spawn(&pid, "/usr/bin/time", nil, nil, argv, environ)
  precondition(rc == 0, "posix_spawn failed: \(rc)")
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  let seconds = benchNow() - start
  if status != 0 {
    fatalError("command failed (status \(status)): \(command)")
  }
  let kilobytes =
    (try? String(contentsOfFile: rssFile, encoding: .utf8))?
    .split(separator: "\n").last.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? 0
  return RunResult(seconds: seconds, peakMB: kilobytes / 1024)
}

func benchNow() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func shell(_ command: String) {
  _ = runMeasured(command, in: "/", quiet: false)
}

/// Writes the flight table (nycflights13's 19 columns) as NDJSON and CSV.
func generateFlights(rows: Int, ndjson: String, csv: String) {
  let carriers = [
    "UA", "AA", "B6", "DL", "EV", "MQ", "US", "WN", "VX", "FL", "AS", "9E", "F9", "HA", "YV", "OO",
  ]
  let airports = [
    "EWR", "LGA", "JFK", "ATL", "ORD", "LAX", "BOS", "MCO", "SFO", "CLT", "MIA", "DCA", "FLL", "DTW",
  ]
  var random = SystemRandomNumberGenerator()
  _ = FileManager.default.createFile(atPath: ndjson, contents: nil)
  _ = FileManager.default.createFile(atPath: csv, contents: nil)
  let json = FileHandle(forWritingAtPath: ndjson)!
  let comma = FileHandle(forWritingAtPath: csv)!
  let columns = [
    "id", "year", "month", "day", "dep_time", "sched_dep_time", "dep_delay", "arr_time", "sched_arr_time",
    "arr_delay", "carrier", "flight", "tailnum", "origin", "dest", "air_time", "distance", "hour", "minute",
    "time_hour",
  ]
  var jsonBuffer = ""
  var csvBuffer = columns.joined(separator: ",") + "\n"
  for i in 0..<rows {
    let month = i * 12 / rows + 1
    let day = Int.random(in: 1...28, using: &random)
    let sched = Int.random(in: 5...23, using: &random) * 100 + Int.random(in: 0...59, using: &random)
    let delay = Int.random(in: -20...120, using: &random)
    let cancelled = Int.random(in: 0..<40, using: &random) == 0
    let dep = cancelled ? "null" : String((sched + delay + 2400) % 2400)
    let arrDelay = cancelled ? "null" : String(delay + Int.random(in: -25...25, using: &random))
    let air = cancelled ? "null" : String(Int.random(in: 30...600, using: &random))
    let carrier = carriers[Int.random(in: 0..<carriers.count, using: &random)]
    let origin = airports[Int.random(in: 0..<3, using: &random)]
    let dest = airports[Int.random(in: 3..<airports.count, using: &random)]
    let tail = "N\(Int.random(in: 100...999, using: &random))\(carrier)"
    let values: [(String, String)] = [
      ("id", String(i + 1)), ("year", "2013"), ("month", String(month)), ("day", String(day)),
      ("dep_time", dep),
      ("sched_dep_time", String(sched)), ("dep_delay", cancelled ? "null" : String(delay)),
      ("arr_time", cancelled ? "null" : String((sched + 300) % 2400)),
      ("sched_arr_time", String((sched + 280) % 2400)),
      ("arr_delay", arrDelay), ("carrier", "\"\(carrier)\""),
      ("flight", String(Int.random(in: 1...6000, using: &random))),
      ("tailnum", "\"\(tail)\""), ("origin", "\"\(origin)\""), ("dest", "\"\(dest)\""), ("air_time", air),
      ("distance", String(Int.random(in: 80...4983, using: &random))), ("hour", String(sched / 100)),
      ("minute", String(sched % 100)),
      (
        "time_hour",
        "\"2013-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)T\(sched / 100 < 10 ? "0" : "")\(sched / 100):00:00Z\""
      ),
    ]
    jsonBuffer += "{" + values.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n"
    csvBuffer +=
      values.map { $0.1 == "null" ? "" : $0.1.replacingOccurrences(of: "\"", with: "") }.joined(
        separator: ",") + "\n"
    if jsonBuffer.utf8.count > 1 << 20 {
      json.write(Data(jsonBuffer.utf8))
      comma.write(Data(csvBuffer.utf8))
      jsonBuffer = ""
      csvBuffer = ""
    }
  }
  json.write(Data(jsonBuffer.utf8))
  comma.write(Data(csvBuffer.utf8))
  try? json.close()
  try? comma.close()
}

let naiveScript = """
  import json, os, sys
  os.makedirs("flights", exist_ok=True)
  with open(sys.argv[1]) as f:
      for line in f:
          row = json.loads(line)
          with open(os.path.join("flights", str(row["id"]) + ".json"), "w") as out:
              json.dump(row, out, indent=2, sort_keys=True, ensure_ascii=False)
              out.write("\\n")
  """

func runImportBench(_ arguments: [String]) {
  let bench = ImportBench(ImportBenchOptions(arguments))
  defer { bench.removeStores() }
  bench.measure()
  bench.printRatios()
}

/// `folio-bench import`: the generated files, the peers' tools, the stores
/// each run makes, and the medians.
private final class ImportBench {
  let options: ImportBenchOptions
  let work: String
  let folio: String
  let ndjson: String
  let csv: String
  let sqliteUtils: String
  /// Names every store of this run, so none reuses an old folder.
  let stamp = String(Int(benchNow() * 1000))
  /// Stores an earlier run left, removed at the end.
  let leftovers: [String]
  /// The stores this run made.
  var made: [String] = []
  /// The medians, by label.
  var results: [String: RunResult] = [:]
  /// The last NDJSON import's store, which the exports read.
  var exportStore = ""

  init(_ options: ImportBenchOptions) {
    self.options = options
    work = options.work
    let binDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
      .deletingLastPathComponent().path
    folio = binDirectory + "/folio"
    precondition(
      FileManager.default.isExecutableFile(atPath: folio), "build folio first: bash scripts/build-release.sh")
    try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    ndjson = work + "/flights.ndjson"
    csv = work + "/flights.csv"
    print("generating \(options.rows) rows, 19 columns + id…")
    generateFlights(rows: options.rows, ndjson: ndjson, csv: csv)
    let venv = work + "/venv"
    if !FileManager.default.isExecutableFile(atPath: venv + "/bin/sqlite-utils") {
      print("installing sqlite-utils into \(venv)…")
      shell("python3 -m venv '\(venv)' && '\(venv)/bin/pip' install -q sqlite-utils")
    }
    sqliteUtils = venv + "/bin/sqlite-utils"
    // ext4 here slows inode allocation for minutes after a mass delete (the
    // kernel's `recently_deleted` check walks the freed inodes), which more
    // than tripled a 337k-file import timed right after the last run's
    // stores were removed. So every store is new, and old ones go at the end.
    leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: work)) ?? []).filter {
      $0.hasPrefix("folio-ndjson") || $0.hasPrefix("folio-csv") || $0.hasPrefix("naive-") || $0 == "naive"
    }
    if !leftovers.isEmpty {
      print(
        "(\(leftovers.count) store(s) from an earlier run stay until the end: removing them now would slow file creation)"
      )
    }
  }

  func removeStores() {
    print("removing the benchmark's stores…")
    for path in leftovers.map({ work + "/" + $0 }) + made {
      let result = shell("rm -rf '\(path)'", in: "/")
      if result.status != 0 { print("warning: could not remove \(path): \(result.output)") }
    }
  }

  /// A new store with an empty `flights` table and one commit.
  func freshStore(_ name: String) -> String {
    let path = work + "/" + name + "-" + stamp + "-" + String(made.count)
    made.append(path)
    shell("mkdir -p '\(path)'")
    try! "version: 1\ntables:\n  flights:\n    path: flights\n".write(
      toFile: path + "/folio.yaml", atomically: true, encoding: .utf8)
    shell(
      "cd '\(path)' && '\(folio)' init >/dev/null && git -c user.name=b -c user.email=b@b commit -qm init --allow-empty"
    )
    return path
  }

  /// Runs `run` --runs times, and records and prints the median time and
  /// the highest peak RSS.
  func record(_ label: String, _ run: () -> RunResult) {
    let runs = (0..<options.runs).map { _ in run() }
    let sorted = runs.sorted { $0.seconds < $1.seconds }
    let result = RunResult(seconds: sorted[sorted.count / 2].seconds, peakMB: runs.map(\.peakMB).max()!)
    results[label] = result
    let load =
      (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
      .joined(separator: " ") ?? "?"
    print(
      "  " + label.padding(toLength: 44, withPad: " ", startingAt: 0)
        + String(format: " %8.2f s   peak RSS %7.1f MB", result.seconds, result.peakMB) + "   load \(load)")
  }

  /// Each Folio step is followed by its peer, so both see about the same
  /// load from whatever else runs on the machine.
  func measure() {
    print("timing (median of \(options.runs)):")
    record("folio import (NDJSON, with commit)") {
      exportStore = freshStore("folio-ndjson")
      return runMeasured("'\(folio)' import flights '\(ndjson)'", in: exportStore)
    }
    record("sqlite-utils insert --nl") {
      shell("rm -f '\(work)/su.db'")
      return runMeasured("'\(sqliteUtils)' insert su.db flights '\(ndjson)' --nl --pk id", in: work)
    }
    record("folio import (CSV, with commit)") {
      runMeasured("'\(folio)' import flights '\(csv)'", in: freshStore("folio-csv"))
    }
    record("sqlite-utils insert --csv") {
      shell("rm -f '\(work)/su-csv.db'")
      return runMeasured("'\(sqliteUtils)' insert su-csv.db flights '\(csv)' --csv --pk id", in: work)
    }
    let export = "'\(folio)' export flights --format ndjson -o '\(work)/export.ndjson'"
    record("folio export --format ndjson") { runMeasured(export, in: exportStore) }
    record("sqlite-utils rows --nl") {
      runMeasured("'\(sqliteUtils)' rows su.db flights --nl > '\(work)/su-export.ndjson'", in: work)
    }
    // The first export after an import builds the table's index, from the
    // packed document cache the import wrote; every later one has the index
    // and reads the same cache.
    record("folio export again (packed cache)") { runMeasured(export, in: exportStore) }
    if options.naive { measureNaive() }
  }

  /// A file per row written by Python's json, then `git add -A` and a commit.
  func measureNaive() {
    try! naiveScript.write(toFile: work + "/naive.py", atomically: true, encoding: .utf8)
    record("naive: file per row + git add -A + commit") {
      let store = work + "/naive-" + stamp + "-" + String(made.count)
      made.append(store)
      shell("mkdir -p '\(store)' && cd '\(store)' && git init -q")
      // Without gc.auto=0 the commit leaves `git gc --auto` packing 337k
      // loose objects in the background, into the next timed step (and
      // racing the final `rm -rf`). It never counted in git's time.
      return runMeasured(
        "sh -c \"python3 '\(work)/naive.py' '\(ndjson)' && git add -A && git -c gc.auto=0 -c user.name=b -c user.email=b@b commit -qm import\"",
        in: store)
    }
  }

  func printRatios() {
    func seconds(_ label: String) -> Double { results[label]!.seconds }
    let folioNDJSON = seconds("folio import (NDJSON, with commit)")
    let sqliteExport = seconds("sqlite-utils rows --nl")
    print("ratios (lower is better for Folio):")
    print(
      String(
        format: "  import NDJSON: folio / sqlite-utils = %.2fx (target <= 1.0)",
        folioNDJSON / seconds("sqlite-utils insert --nl")))
    print(
      String(
        format: "  import CSV:    folio / sqlite-utils = %.2fx",
        seconds("folio import (CSV, with commit)") / seconds("sqlite-utils insert --csv")))
    if let naive = results["naive: file per row + git add -A + commit"] {
      print(
        String(
          format: "  import NDJSON: folio / naive pipeline = %.2fx (target <= 0.35)",
          folioNDJSON / naive.seconds))
    }
    print(
      String(
        format: "  export NDJSON: folio / sqlite-utils rows = %.2fx (target <= 1.0)",
        seconds("folio export --format ndjson") / sqliteExport))
    print(
      String(
        format: "  export NDJSON again: folio / sqlite-utils rows = %.2fx",
        seconds("folio export again (packed cache)") / sqliteExport))
    let importPeak = max(
      results["folio import (NDJSON, with commit)"]!.peakMB,
      results["folio import (CSV, with commit)"]!.peakMB)
    print(
      String(
        format: "  peak RSS: import %.0f MB, export %.0f MB (target < 150)", importPeak,
        results["folio export --format ndjson"]!.peakMB))
  }
}
