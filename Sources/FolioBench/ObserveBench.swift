@_spi(Benchmark) import Folio
import Foundation
import Synchronization

// folio-bench observe: live-query cost and latency. A table of --docs
// documents, --observers live queries (half single-document, half limited
// windows of 10 over an order index, alternately limitToFirst from a random
// startAt and limitToLast up to a random endAt), --mutations
// single-document transactions: mutations per second with and without the
// observers, and the time from commit to handler (p50, p99), for commits in
// this process and in another (this binary, `observe-writer`). The commit
// instant is the one the library notes when the transaction's documents
// are all in place, past its durability point and before any live query
// hears of it (`Store.lastCommitWallNanos`, SPI); the handler notes the
// wall clock when it first sees the mutation's `seq`. Both are
// CLOCK_REALTIME, so the two processes' times compare.

private struct ObserveOptions {
  var docs = 100_000
  var observers = 1_000
  var mutations = 10_000
  var keep = false

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
      case "--observers": observers = next()
      case "--mutations": mutations = next()
      case "--keep": keep = true
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench observe [--docs N] [--observers N] [--mutations N] [--keep]
            --docs N        documents in the table (default 100000)
            --observers N   live queries, half single-document, half windows (default 1000)
            --mutations N   single-document transactions per phase (default 10000)
            --keep          keep the scratch store and print its path
          """)
        exit(0)
      default: fatalError("unknown option \(arguments[i]); see --help")
      }
      i += 1
    }
  }
}

private func wallNanos() -> Int { Store.wallNanos() }

/// A deterministic generator, so runs are comparable.
private struct BenchRandom {
  var state: UInt64
  mutating func next(_ bound: Int) -> Int {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return Int((z ^ (z >> 31)) % UInt64(bound))
  }
}

/// The mutations of one phase: (pk, new rank), the same in both processes.
private func mutationPlan(docs: Int, count: Int, watched: [String], seed: UInt64) -> [(String, Int)] {
  var random = BenchRandom(state: seed)
  return (0..<count).map { _ in
    // Half on watched documents, so there are events to time.
    let pk = random.next(2) == 0 ? watched[random.next(watched.count)] : "d\(random.next(docs))"
    return (pk, random.next(docs))
  }
}

/// `folio-bench observe-writer ROOT DOCS COUNT SEED WATCHED...`: applies a
/// phase's mutations and prints `seq commitNanos` per commit.
func runObserveWriter(_ arguments: [String]) throws {
  let store = try Store(at: URL(fileURLWithPath: arguments[0]))
  let watched = Array(arguments[4...])
  let plan = mutationPlan(
    docs: Int(arguments[1])!, count: Int(arguments[2])!, watched: watched, seed: UInt64(arguments[3])!)
  var out = ""
  for (seq, (pk, rank)) in plan.enumerated() {
    try store.apply(
      table: "items", pk: pk, op: .upsert,
      columns: ["rank": .integer(rank), "seq": .integer(1_000_000 + seq)])
    out += "\(1_000_000 + seq) \(store.lastCommitWallNanos)\n"
  }
  FileHandle.standardOutput.write(Data(out.utf8))
}

func runObserveBenchmark(_ arguments: [String]) throws {
  let options = ObserveOptions(arguments)
  let root = NSTemporaryDirectory() + "/folio-observe-bench-\(getpid())"
  try? FileManager.default.removeItem(atPath: root)
  try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
  defer { if !options.keep { try? FileManager.default.removeItem(atPath: root) } }
  print(
    "observe: \(options.docs) documents, \(options.observers) live queries, \(options.mutations) mutations")
  let bench = try ObserveBench(root: root, options: options)
  // Without observers.
  var ends: [Int: Int] = [:]
  let basePlan = mutationPlan(docs: options.docs, count: options.mutations, watched: bench.singles, seed: 1)
  print(
    String(
      format: "  mutations/s, no observers  %.0f", try bench.applyPlan(basePlan, seqBase: 0, ends: &ends)))
  // With observers: the handlers note when each seq is first seen.
  let seen = SeenSeqs()
  let live = try bench.openLiveQueries(seen: seen)
  let watchedPlan = mutationPlan(
    docs: options.docs, count: options.mutations, watched: bench.singles, seed: 2)
  ends = [:]
  bench.returns = []
  let observedRate = try bench.applyPlan(watchedPlan, seqBase: 0, ends: &ends)
  print(String(format: "  mutations/s, observed      %.0f", observedRate))
  Thread.sleep(forTimeInterval: 1)
  report("in process", ends: ends, seen: seen.times.withLock { $0 })
  let returns = bench.returns.sorted()
  if !returns.isEmpty {
    print(
      String(
        format: "  commit -> call returns, observed p50 %.2f ms, p99 %.2f ms",
        Double(returns[returns.count / 2]) / 1e6,
        Double(returns[min(returns.count - 1, returns.count * 99 / 100)]) / 1e6))
  }
  seen.times.withLock { $0 = [:] }
  let childEnds = try bench.writeFromAnotherProcess()
  report("another process", ends: childEnds, seen: seen.times.withLock { $0 })
  for query in live { query.stop() }
  // This machine's speed drifts: a second run without observers, after
  // them, shows how much.
  var afterEnds: [Int: Int] = [:]
  let afterPlan = mutationPlan(docs: options.docs, count: options.mutations, watched: bench.singles, seed: 4)
  let afterRate = try bench.applyPlan(afterPlan, seqBase: 2_000_000, ends: &afterEnds)
  print(String(format: "  mutations/s, no observers, again  %.0f", afterRate))
  if options.keep { print("  store: \(root)") }
}

/// When each seq was first seen by a handler (wall clock, nanoseconds).
private final class SeenSeqs: Sendable {
  let times = Mutex<[Int: Int]>([:])
}

/// `folio-bench observe`: the store, the documents single-document queries
/// watch, and the time from each commit to the call's return.
private final class ObserveBench {
  let root: String
  let options: ObserveOptions
  let store: Store
  let items: DocumentCollection
  /// Picks the pks and ranks the live queries watch.
  var random: BenchRandom
  /// The pks half the live queries watch one by one.
  let singles: [String]
  /// For each mutation, how long after its commit instant the call returned.
  var returns: [Int] = []

  /// Makes the store at `root` with `options.docs` documents ordered by rank.
  init(root: String, options: ObserveOptions) throws {
    self.root = root
    self.options = options
    try """
    version: 1
    tables:
      items:
        order: [rank]
    """.write(toFile: root + "/folio.yaml", atomically: true, encoding: .utf8)
    store = try Store.create(at: URL(fileURLWithPath: root))
    items = store.collection("items")
    let start = Date()
    var i = 0
    while i < options.docs {
      let end = min(options.docs, i + 1_000)
      try store.write { tx in
        for n in i..<end {
          try tx.apply(table: "items", pk: "d\(n)", op: .insert, columns: ["rank": .integer(n)])
        }
      }
      i = end
    }
    _ = try items.query().limitToFirst(1).get()  // builds the order index
    print(String(format: "  setup                      %.1f s", Date().timeIntervalSince(start)))
    var generator = BenchRandom(state: 42)
    singles = (0..<options.observers / 2).map { _ in "d\(generator.next(options.docs))" }
    random = generator
  }

  /// Applies `plan`, noting each seq's commit instant in `ends`; returns
  /// mutations per second.
  func applyPlan(_ plan: [(String, Int)], seqBase: Int, ends: inout [Int: Int]) throws -> Double {
    let begin = Date()
    for (seq, (pk, rank)) in plan.enumerated() {
      try store.apply(
        table: "items", pk: pk, op: .upsert,
        columns: ["rank": .integer(rank), "seq": .integer(seqBase + seq)])
      let committed = store.lastCommitWallNanos
      returns.append(wallNanos() - committed)
      ends[seqBase + seq] = committed
    }
    return Double(plan.count) / Date().timeIntervalSince(begin)
  }

  /// Opens the live queries: one per single pk, and windows of ten around
  /// random ranks; each notes in `seen` when it first sees a seq.
  func openLiveQueries(seen: SeenSeqs) throws -> [LiveQuery] {
    @Sendable func note(_ document: Document?) {
      guard let seq = document?["seq"]?.intValue else { return }
      let now = wallNanos()
      seen.times.withLock { if $0[seq] == nil { $0[seq] = now } }
    }
    let start = Date()
    var live: [LiveQuery] = []
    // The library's default is the main queue (seed 000), which this
    // program does not run.
    let delivery = DispatchQueue(label: "folio-bench.observe")
    for pk in singles {
      live.append(try items.findByID(pk).observeLocal(deliverOn: delivery) { document, _ in note(document) })
    }
    for n in 0..<(options.observers - singles.count) {
      let ordered = try items.query().orderBy(child: "rank")
      let bound = JSONValue.integer(random.next(options.docs))
      let query =
        n % 2 == 0 ? try ordered.startAt(bound).limitToFirst(10) : try ordered.endAt(bound).limitToLast(10)
      live.append(
        try query.observeLocal(deliverOn: delivery) { _, event in
          guard case .update(let update) = event else { return }
          for child in update.childEvents where child.kind != .removed { note(child.document) }
        })
    }
    print(String(format: "  open live queries          %.1f s", Date().timeIntervalSince(start)))
    return live
  }

  /// Another process writes (`observe-writer`); returns each seq's commit
  /// instant as it reported them, and prints its rate.
  func writeFromAnotherProcess() throws -> [Int: Int] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments =
      ["observe-writer", root, String(options.docs), String(options.mutations), "3"] + singles
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    Thread.sleep(forTimeInterval: 1)
    var childEnds: [Int: Int] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let parts = line.split(separator: " ")
      if parts.count == 2, let seq = Int(parts[0]), let end = Int(parts[1]) { childEnds[seq] = end }
    }
    let writes = childEnds.values.sorted()
    if writes.count > 1 {
      let seconds = Double(writes.last! - writes.first!) / 1e9
      print(
        String(format: "  mutations/s, observed, another process  %.0f", Double(writes.count - 1) / seconds))
    }
    return childEnds
  }
}

private func report(_ name: String, ends: [Int: Int], seen: [Int: Int]) {
  // A handler always runs after the commit instant, as both clocks are the
  // system's: a negative time would be a clock step, counted as 0.
  let latencies = seen.compactMap { seq, time in ends[seq].map { max(0, time - $0) } }.sorted()
  guard !latencies.isEmpty else {
    print("  latency, \(name): no events")
    return
  }
  func percentile(_ p: Double) -> Double {
    Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1e6
  }
  print(
    String(
      format: "  latency, %@ p50 %.2f ms, p99 %.2f ms (%d events)",
      name.padding(toLength: 30, withPad: " ", startingAt: 0),
      percentile(0.5), percentile(0.99), latencies.count))
}
