internal import CSystem
import Folio
import Foundation

// folio-bench: Folio's JSON codec and store against Foundation's JSON, in one
// run, as ratios. Run: bash scripts/build-release.sh && .build/release/folio-bench [--docs N] [--runs R]

struct Options {
  var docs = 300_000
  var foundationDocs = 300_000
  var foundationWriteDocs = 20_000
  var runs = 3
  var singleMutations = 300
  var batchMutations = 20_000
  var batchSize = 1_000
  var profileParse = false

  init(_ arguments: [String]) {
    var i = 0
    func next() -> Int {
      i += 1
      guard i < arguments.count, let value = Int(arguments[i]), value > 0 else {
        fatalError("option \(arguments[i - 1]) needs a positive number")
      }
      return value
    }
    while i < arguments.count {
      switch arguments[i] {
      case "--docs": docs = next()
      case "--foundation-docs": foundationDocs = next()
      case "--foundation-write-docs": foundationWriteDocs = next()
      case "--runs": runs = next()
      case "--single": singleMutations = next()
      case "--batch": batchMutations = next()
      case "--profile-parse": profileParse = true
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench [--docs N] [--foundation-docs N] [--runs N] [--single N] [--batch N]
            --docs N             documents for Folio's codec (default 300000)
            --foundation-docs N  documents Foundation parses (default 300000)
            --foundation-write-docs N
                                 documents Foundation pretty-prints, ~0.5 ms each (default 20000)
            --runs N             repetitions; medians are reported (default 3)
            --single N           single mutations, each its own transaction (default 300)
            --batch N            mutations in store.write batches of 1000 (default 20000)
            --profile-parse      only parse with Folio, 10 times over (for perf record),
                                 and print the fastest round

          The other benchmarks are subcommands, each with its own --help:
            query, import, sync, scale, partial, history, storm, watch, observe, serve, startup
          """)
        exit(0)
      default: fatalError("unknown option \(arguments[i]); see --help")
      }
      i += 1
    }
    foundationDocs = min(foundationDocs, docs)
    foundationWriteDocs = min(foundationWriteDocs, foundationDocs)
  }
}

// Line by line, so that a run piped to a file shows its progress and keeps
// every figure printed before a failure (a fatal error does not flush).
folio_line_buffer_stdout()
// The library's settings, as `folio` takes them; what the benchmarks
// `setenv` later is for the `folio` processes they start.
FolioSettings.use(FolioSettings(environment: ProcessInfo.processInfo.environment))

if CommandLine.arguments.dropFirst().first == "query" {  // queries: QueryBench.swift
  try runQueryBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "startup" {  // whole processes: StartupBench.swift
  try runStartupBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
// Small operations as the store grows: ScaleBench.swift.
if CommandLine.arguments.dropFirst().first == "scale" {
  try runScaleBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
// Partial clones: PartialCloneBench.swift.
if CommandLine.arguments.dropFirst().first == "partial" {
  try runPartialCloneBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "sync" {  // commit and merge: SyncBench.swift
  try runSyncBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "history" {  // diff, as-of and blame: HistoryBench.swift
  try runHistoryBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "watch" {  // the watcher: WatchBench.swift
  try WatchBench.main(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "import" {  // import and export: ImportBench.swift
  runImportBench(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "storm" {  // many replicas pushing at once: StormBench.swift
  try runStormBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "serve" {  // folio serve: ServeBench.swift
  try runServeBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "observe" {  // live queries: ObserveBench.swift
  try runObserveBenchmark(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "observe-writer" {  // its other process
  try runObserveWriter(Array(CommandLine.arguments.dropFirst(2)))
  exit(0)
}
let options = Options(Array(CommandLine.arguments.dropFirst()))

func now() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted.count % 2 == 1
    ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Median seconds of `runs` runs of `body`; `setup` runs untimed before
/// each (it frees the previous run's results, so their deallocation is not
/// billed to the next run).
func measure(setup: () -> Void = {}, _ body: () -> Void) -> Double {
  median(
    (0..<options.runs).map { _ in
      setup()
      let start = now()
      body()
      return now() - start
    })
}

/// Times `folio` and `foundation` alternately, `runs` times, so that the
/// machine's slow swings in speed hit both alike. Returns each one's median
/// seconds and the median of the per-run ratios (foundation / folio, per
/// document).
func measurePair(
  folioCount: Int, foundationCount: Int,
  setup: () -> Void, folio: () -> Void, foundation: () -> Void
) -> (folio: Double, foundation: Double, ratio: Double) {
  var folioTimes: [Double] = []
  var foundationTimes: [Double] = []
  var ratios: [Double] = []
  // One untimed round first, so that neither side pays for first-touch
  // page faults of the heap the other grew.
  setup()
  folio()
  setup()
  foundation()
  for _ in 0..<options.runs {
    setup()
    var start = now()
    folio()
    let a = now() - start
    setup()
    start = now()
    foundation()
    let b = now() - start
    folioTimes.append(a)
    foundationTimes.append(b)
    ratios.append((b / Double(foundationCount)) / (a / Double(folioCount)))
  }
  return (median(folioTimes), median(foundationTimes), median(ratios))
}

// A deterministic flight-shaped table: 19 mixed columns.
nonisolated(unsafe) var seed: UInt64 = 42  // the benchmark is single-threaded
func random(_ bound: Int) -> Int {
  seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
  return Int((seed >> 33) % UInt64(bound))
}
let airlines = ["AA", "AS", "B6", "DL", "EV", "F9", "HA", "MQ", "NK", "OO", "UA", "US", "VX", "WN"]
let airports = ["ATL", "BOS", "DEN", "DFW", "JFK", "LAX", "ORD", "SEA", "SFO", "MSP", "PHX", "IAH"]
func flight(_ i: Int) -> JSONValue {
  let delay = random(2) == 0 ? JSONValue.null : .number(String(random(400) - 60) + "." + String(random(10)))
  let cancelled = random(50) == 0
  return [
    "id": .string("f\(i)"), "YEAR": 2015, "MONTH": .integer(1 + random(12)), "DAY": .integer(1 + random(28)),
    "DAY_OF_WEEK": .integer(1 + random(7)), "AIRLINE": .string(airlines[random(airlines.count)]),
    "FLIGHT_NUMBER": .integer(random(7000)), "TAIL_NUMBER": .string("N\(random(999))\(airlines[random(4)])"),
    "ORIGIN_AIRPORT": .string(airports[random(airports.count)]),
    "DESTINATION_AIRPORT": .string(airports[random(airports.count)]),
    "SCHEDULED_DEPARTURE": .integer(random(2400)), "DEPARTURE_TIME": .integer(random(2400)),
    "DEPARTURE_DELAY": delay, "TAXI_OUT": .integer(random(40)), "DISTANCE": .integer(100 + random(2500)),
    "ARRIVAL_DELAY": .number(String(random(300) - 50) + ".25"), "DIVERTED": .bool(random(100) == 0),
    "CANCELLED": .bool(cancelled), "CANCELLATION_REASON": cancelled ? .string("B") : .null,
  ]
}

print("generating \(options.docs) flight documents (19 columns)…")
var texts: [[UInt8]] = (0..<options.docs).map { flight($0).canonicalBytes() }
let totalBytes = texts.reduce(0) { $0 + $1.count }
let foundationTexts = texts.prefix(options.foundationDocs).map { Data($0) }
let foundationBytes = foundationTexts.reduce(0) { $0 + $1.count }
let foundationWriteBytes = foundationTexts.prefix(options.foundationWriteDocs).reduce(0) { $0 + $1.count }
print(
  "  \(totalBytes / 1_000_000) MB canonical JSON; Foundation parses the first \(options.foundationDocs)"
    + " and pretty-prints the first \(options.foundationWriteDocs)")

var parsed: [JSONValue] = []
if options.profileParse {
  // Prints the fastest round in CPU time, which other processes on a busy
  // machine disturb less than wall time, to compare builds of Folio.
  func cpuTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
  }
  var best = Double.infinity
  for _ in 0..<10 {
    parsed = []
    let start = cpuTime()
    parsed = texts.map { try! JSONValue(parsing: $0) }
    best = min(best, cpuTime() - start)
  }
  print(
    String(
      format: "fastest of 10 Folio parse rounds: %.3f µs/doc (CPU time)", best / Double(options.docs) * 1e6))
  exit(0)
}
var foundationObjects: [Any] = []
let (folioParse, foundationParse, parseRatio) = measurePair(
  folioCount: options.docs, foundationCount: options.foundationDocs,
  setup: {
    parsed = []
    foundationObjects = []
  },
  folio: { parsed = texts.map { try! JSONValue(parsing: $0) } },
  foundation: { foundationObjects = foundationTexts.map { try! JSONSerialization.jsonObject(with: $0) } })
parsed = texts.map { try! JSONValue(parsing: $0) }
foundationObjects = foundationTexts.map { try! JSONSerialization.jsonObject(with: $0) }

// NDJSON lines, as imports read them: the same documents, compact.
let compactTexts = parsed.map { $0.compactBytes() }
let compactBytes = compactTexts.reduce(0) { $0 + $1.count }
let foundationCompact = compactTexts.prefix(options.foundationDocs).map { Data($0) }
let foundationCompactBytes = foundationCompact.reduce(0) { $0 + $1.count }
var scratchValues: [JSONValue] = []
var scratchObjects: [Any] = []
let (folioCompactParse, foundationCompactParse, compactRatio) = measurePair(
  folioCount: options.docs, foundationCount: options.foundationDocs,
  setup: {
    scratchValues = []
    scratchObjects = []
  },
  folio: { scratchValues = compactTexts.map { try! JSONValue(parsing: $0) } },
  foundation: { scratchObjects = foundationCompact.map { try! JSONSerialization.jsonObject(with: $0) } })
scratchValues = []
scratchObjects = []
var written = 0
let folioWrite = measure {
  written = 0
  for value in parsed { written &+= value.canonicalBytes().count }
}
let foundationWrite = measure {
  for object in foundationObjects.prefix(options.foundationWriteDocs) {
    _ = try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
  }
}
precondition(written == totalBytes, "canonical write did not round-trip")

func perDoc(_ seconds: Double, _ count: Int) -> Double { seconds / Double(count) }
let writeRatio = perDoc(foundationWrite, options.foundationWriteDocs) / perDoc(folioWrite, options.docs)
func mbps(_ bytes: Int, _ seconds: Double) -> String {
  String(format: "%.1f MB/s", Double(bytes) / seconds / 1e6)
}
func usPerDoc(_ seconds: Double, _ count: Int) -> String {
  String(format: "%.2f µs/doc", seconds / Double(count) * 1e6)
}

// Mutations in a real store in a temp folder.
let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("folio-bench-\(getpid())")
try? FileManager.default.removeItem(at: directory)
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
try "version: 1\ntables:\n  flights:\n    path: flights\n    columns:\n      views: counter\n".write(
  to: directory.appendingPathComponent("folio.yaml"), atomically: true, encoding: .utf8)
let store = try Store.create(at: directory)
let single = measure {
  for i in 0..<options.singleMutations {
    try! store.apply(table: "flights", pk: "s\(i % 50)", op: .upsert, transforms: ["views": .increment(1)])
  }
}
let batched = measure {
  var i = 0
  while i < options.batchMutations {
    try! store.write { tx in
      for j in i..<min(i + options.batchSize, options.batchMutations) {
        try tx.apply(
          table: "flights", pk: "b\(j % 5000)", op: .upsert, columns: ["n": .integer(j)],
          transforms: ["views": .increment(1)])
      }
    }
    i += options.batchSize
  }
}

print(
  """

  task                         Folio                      Foundation JSONSerialization   folio/Foundation, time per document
  parse (canonical docs)       \(mbps(totalBytes, folioParse)), \(usPerDoc(folioParse, options.docs))   \(mbps(foundationBytes, foundationParse)), \(usPerDoc(foundationParse, options.foundationDocs))   \(String(format: "%.2fx", 1 / parseRatio)) (target ≤ 0.2x)
  parse (compact NDJSON lines) \(mbps(compactBytes, folioCompactParse)), \(usPerDoc(folioCompactParse, options.docs))   \(mbps(foundationCompactBytes, foundationCompactParse)), \(usPerDoc(foundationCompactParse, options.foundationDocs))   \(String(format: "%.2fx", 1 / compactRatio))
  canonical write (sorted)     \(mbps(totalBytes, folioWrite)), \(usPerDoc(folioWrite, options.docs))   \(mbps(foundationWriteBytes, foundationWrite)), \(usPerDoc(foundationWrite, options.foundationWriteDocs))   \(String(format: "%.2fx", 1 / writeRatio)) (target ≤ 0.05x)

  store mutations              \(String(format: "%.0f", Double(options.singleMutations) / single))/s single (each durable), \(String(format: "%.0f", Double(options.batchMutations) / batched))/s batched (store.write of \(options.batchSize))
  (medians of \(options.runs) runs; parse runs follow one warm-up round, alternate Folio and Foundation, and the
   ratio is the median of the per-run ratios)
  """)
