import Folio
import Foundation

// folio-bench query: ordered queries over a ~300k-document flight table
// with `order: [dep_delay]`, in process and through the `folio` binary,
// against the same queries through the sqlite3 CLI on the same data with an
// index. Run: bash scripts/build-release.sh && .build/release/folio-bench query [--docs N] [--runs R]

struct QueryBenchOptions {
  var docs = 300_000
  var runs = 5
  var directory: String?
  var serve: Int?
  var only: String?

  init(_ arguments: [String]) {
    forEachBenchArgument(arguments) { flag, value in
      switch flag {
      case "--docs": docs = Int(value()) ?? docs
      case "--runs": runs = Int(value()) ?? runs
      case "--dir": directory = value()
      case "--serve": serve = Int(value())
      case "--only": only = value()
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench query [--docs N] [--runs N] [--dir DIR] [--only P]
            --docs N   flight documents (default 300000)
            --runs N   repetitions per timing; medians are reported (default 5)
            --dir DIR  keep the generated store and database in DIR and reuse them
                       on the next run (default: a temp folder, removed afterwards)
            --serve S  only publish the index state of DIR/store for S seconds
                       (store.publishIndexes()), to time `folio query` by hand
            --only P   only the rows whose name starts with P (e.g. "unindexed"),
                       without the daemon and cold sections
          The last table times fresh `folio query` processes without a publisher, the first
          one with FOLIO_INDEX_DAEMON=auto (it starts the index daemon), and the ones after it.
          """)
        exit(0)
      default: fatalError("unknown option \(flag); see --help")
      }
    }
  }
}

func runQueryBenchmark(_ arguments: [String]) throws {
  let options = QueryBenchOptions(arguments)
  let keep = options.directory != nil
  let root = options.directory ?? (NSTemporaryDirectory() + "folio-query-bench-\(getpid())")
  defer { if !keep { try? FileManager.default.removeItem(atPath: root) } }
  let store = try prepareQueryBenchStore(root: root, docs: options.docs)
  if let seconds = options.serve {
    let publisher = try store.publishIndexes()
    print("publishing the index state of \(store.rootPath) for \(seconds) s")
    sleep(UInt32(seconds))
    publisher.stop()
    return
  }
  // The rows below time fresh processes without any publisher: no daemon
  // may start until the section that measures one.
  setenv("FOLIO_INDEX_DAEMON", "off", 1)
  try store.stopIndexDaemon()
  defer { _ = try? store.stopIndexDaemon() }
  var bench = try QueryBench(options: options, root: root, store: store)
  try bench.measureWarm()
  bench.printWarm()
  if options.only != nil { return }
  try bench.measureWithDaemon()
  bench.printPlannerTargets()
  try bench.measureCold()
}

/// The flight store and the sqlite3 database under `root`, generated once
/// for `docs` documents and reused after.
private func prepareQueryBenchStore(root: String, docs: Int) throws -> Store {
  let storePath = root + "/store"
  let marker = root + "/generated-\(docs)"
  if !FileManager.default.fileExists(atPath: marker) {
    try? FileManager.default.removeItem(atPath: root)
    try FileManager.default.createDirectory(atPath: storePath + "/flights", withIntermediateDirectories: true)
    print("generating \(docs) flight documents and the sqlite database…")
    try generateFlights(count: docs, storePath: storePath, databasePath: root + "/flights.sqlite", root: root)
    _ = FileManager.default.createFile(atPath: marker, contents: nil)
  }
  return try Store.create(at: URL(fileURLWithPath: storePath))
}

/// The timed queries of `folio-bench query`: each in process, through a
/// whole `folio query` process, and through sqlite3, with what they share.
private struct QueryBench {
  /// One query's medians.
  struct Row {
    var name: String
    var folioInProcess: Double
    var folioProcess: Double?
    var sqliteInProcess: Double
    var sqliteProcess: Double
    var cli: [String]?
  }

  let options: QueryBenchOptions
  let storePath: String
  let databasePath: String
  let folio = folioBinaryBesideBench()
  let store: Store
  let flights: DocumentCollection
  /// How many documents the table has.
  let total: Int
  /// A cursor in the middle of the order: the first document with a delay
  /// of 5 minutes or more.
  let cursor: Document
  var rows: [Row] = []

  static let filter = #"airline == "AA" && dep_delay > 60"#
  static let firstSQL = "SELECT doc FROM flights ORDER BY dep_delay, id LIMIT 20"
  static let firstCLI = ["query", "flights", "--limit-to-first", "20"]
  static let indexedWhere = "dep_delay > 300"
  static let indexedSQL = "SELECT doc FROM flights WHERE dep_delay > 300 ORDER BY dep_delay, id"
  static let unindexedWhere = #"airline == "AA""#
  static let unindexedSQL = "SELECT count(*) FROM flights WHERE airline = 'AA'"

  init(options: QueryBenchOptions, root: String, store: Store) throws {
    self.options = options
    self.store = store
    storePath = store.rootPath
    databasePath = root + "/flights.sqlite"
    flights = store.collection("flights")
    let start = benchNow()
    total = try flights.query().count()
    print("index: \(total) documents, first query (builds or loads the index) \(ms(benchNow() - start))")
    cursor = try flights.query().orderBy(child: "dep_delay").startAt(5).limitToFirst(1).get()[0]
  }

  var cursorValue: JSONValue { cursor["dep_delay"]! }

  func firstPage() throws -> [Document] {
    try flights.query().orderBy(child: "dep_delay").limitToFirst(20).get()
  }

  func middlePage() throws -> [Document] {
    try flights.query().orderBy(child: "dep_delay").startAfter(cursorValue, key: cursor.pk).limitToFirst(20)
      .get()
  }

  /// Times one query: in process (the mean of `repeats` calls in a row,
  /// like sqlite3's statement share, so a sub-millisecond page is not one
  /// clock reading), through `folio` with `cli`, and through sqlite3.
  mutating func add(
    _ name: String, inProcess: () throws -> Void, cli: [String]?, sql: String, repeats: Int = 200
  ) throws {
    if let only = options.only, !name.hasPrefix(only) { return }
    let folioTime =
      try benchMedian(options.runs) { for _ in 0..<repeats { try inProcess() } } / Double(repeats)
    let processTime = try cli.map { arguments in
      try benchMedian(options.runs) { try spawnTimed(folio, ["-C", storePath] + arguments) }
    }
    let sqliteTimes = try (0..<options.runs).map { _ in try sqliteTimed(databasePath, sql, repeats: repeats) }
    rows.append(
      Row(
        name: name, folioInProcess: folioTime, folioProcess: processTime,
        sqliteInProcess: benchMedianOf(sqliteTimes.map(\.statement)),
        sqliteProcess: benchMedianOf(sqliteTimes.map(\.process)), cli: cli))
  }

  /// Pages, the streamed scan and a filter, each checked against sqlite3's
  /// answer first.
  mutating func measureWarm() throws {
    let middleCLI = [
      "query", "flights", "--start-after", cursorValue.compactString, "--start-key", cursor.pk,
      "--limit-to-first", "20",
    ]
    let (folioFirst, sqliteFirst) = (try firstPage().map(\.pk), try sqliteIDs(databasePath, Self.firstSQL))
    precondition(folioFirst == sqliteFirst, "first pages differ")
    let bench = self
    try add(
      "first page (limit 20)", inProcess: { _ = try bench.firstPage() }, cli: Self.firstCLI,
      sql: Self.firstSQL)
    let cursorSQL = "(dep_delay, id) > (\(cursorValue.compactString), '\(cursor.pk)')"
    let middleSQL = "SELECT doc FROM flights WHERE \(cursorSQL) ORDER BY dep_delay, id LIMIT 20"
    let (folioMiddle, sqliteMiddle) = (try middlePage().map(\.pk), try sqliteIDs(databasePath, middleSQL))
    precondition(folioMiddle == sqliteMiddle, "middle pages differ")
    try add(
      "middle page by cursor", inProcess: { _ = try bench.middlePage() }, cli: middleCLI, sql: middleSQL)
    var scanned: Int?
    try add(
      "full ordered scan (streamed)",
      inProcess: {
        var n = 0
        // swift-format-ignore: ReplaceForEachWithForLoop
        // (Query.forEach is the API measured, not a Sequence's.)
        try bench.flights.query().orderBy(child: "dep_delay").forEach { _ in n += 1 }
        scanned = n
      }, cli: nil, sql: "SELECT count(length(doc)) FROM (SELECT doc FROM flights ORDER BY dep_delay, id)",
      repeats: 3)
    precondition(scanned.map { $0 == total } ?? true, "scan missed documents")
    let filterSQL = "SELECT count(*) FROM flights WHERE airline = 'AA' AND dep_delay > 60"
    let folioCount = try flights.query().where(Self.filter).count()
    let sqliteCount = try sqliteIDs(databasePath, filterSQL).first ?? ""
    precondition(String(folioCount) == sqliteCount, "filter counts differ")
    try add(
      "--where filter, count (\(folioCount) match)",
      inProcess: { _ = try bench.flights.query().where(Self.filter).count() },
      cli: ["query", "flights", "--where", Self.filter, "--count"], sql: filterSQL, repeats: 3)
    try measurePlanned()
  }

  /// The planner's queries: a where on the indexed path against the same
  /// range asked for directly, and a where on a path with no index. Each
  /// returns its documents, so that the planned where cannot skip reading.
  mutating func measurePlanned() throws {
    let rangeCount = try flights.query().orderBy(child: "dep_delay").startAfter(300).get().count
    let whereCount = try flights.query().where(Self.indexedWhere).get().count
    precondition(rangeCount == whereCount, "the planned where and the range differ")
    let flights = flights
    try add(
      "indexed --where, documents (\(whereCount))",
      inProcess: { _ = try flights.query().where(Self.indexedWhere).get() },
      cli: ["query", "flights", "--where", Self.indexedWhere], sql: Self.indexedSQL, repeats: 5)
    try add(
      "the same range by --start-after",
      inProcess: { _ = try flights.query().orderBy(child: "dep_delay").startAfter(300).get() },
      cli: ["query", "flights", "--start-after", "300"], sql: Self.indexedSQL, repeats: 5)
    let unindexedCount = try flights.query().where(Self.unindexedWhere).count()
    let sqliteUnindexed = try sqliteIDs(databasePath, Self.unindexedSQL).first ?? ""
    precondition(String(unindexedCount) == sqliteUnindexed, "counts differ")
    try add(
      "unindexed --where, count (\(unindexedCount))",
      inProcess: { _ = try flights.query().where(Self.unindexedWhere).count() },
      cli: ["query", "flights", "--where", Self.unindexedWhere, "--count"], sql: Self.unindexedSQL, repeats: 3
    )
  }

  func printWarm() {
    print(
      """

      \(total) documents, order: [dep_delay]; medians of \(options.runs) runs. "process" is the whole
      `folio query …` / `sqlite3 db 'SELECT …'` process; "in-process" is the library call (the mean of 200 calls
      in a row; 3 for the scan and filter), and for sqlite3 the statement's share of one process
      running it as many times.

      query                                   Folio in-process  sqlite3 stmt     ratio   Folio process  sqlite3 process  ratio
      """)
    for row in rows {
      let ratio = row.folioInProcess / max(row.sqliteInProcess, 1e-6)
      let processRatio = row.folioProcess.map { String(format: "%.1fx", $0 / row.sqliteProcess) } ?? "—"
      print(
        row.name.padded(40) + ms(row.folioInProcess).padded(18) + ms(row.sqliteInProcess).padded(17)
          + String(format: "%.1fx", ratio).padded(8) + (row.folioProcess.map(ms) ?? "—").padded(15)
          + ms(row.sqliteProcess).padded(17) + processRatio)
    }
  }

  /// The same pages through fresh `folio query` processes with the index
  /// daemon on: the first one finds no publisher, takes the stat of every
  /// file and starts a daemon; the ones after it are answered by the daemon.
  func measureWithDaemon() throws {
    setenv("FOLIO_INDEX_DAEMON", "auto", 1)
    let starting = try spawnTimed(folio, ["-C", storePath] + Self.firstCLI)
    var waited = 0
    while case .none = store.indexDaemonStatus(), waited < 500 {
      usleep(10_000)
      waited += 1
    }
    guard case .daemon = store.indexDaemonStatus() else {
      fatalError("the first query started no index daemon")
    }
    let withDaemon = try rows.compactMap { row -> (String, Double)? in
      guard let arguments = row.cli else { return nil }
      // The warm-up run also waits for the daemon's own first check.
      return (
        row.name, try benchMedian(options.runs) { try spawnTimed(folio, ["-C", storePath] + arguments) }
      )
    }
    try store.stopIndexDaemon()
    setenv("FOLIO_INDEX_DAEMON", "off", 1)
    print(
      """

      whole `folio query` process: with no publisher (FOLIO_INDEX_DAEMON=off); the first query with
      the daemon on (no publisher yet: it checks every file and starts `folio index-daemon`); then
      with that daemon answering:

      """)
    print(
      "query".padded(40) + "no publisher".padded(15) + "first, starts".padded(15) + "daemon".padded(15)
        + "sqlite3 process".padded(17) + "ratio, daemon")
    for (name, time) in withDaemon {
      guard let row = rows.first(where: { $0.name == name }) else { continue }
      print(
        name.padded(40) + (row.folioProcess.map(ms) ?? "—").padded(15)
          + (name.hasPrefix("first") ? ms(starting) : "—").padded(15) + ms(time).padded(15)
          + ms(row.sqliteProcess).padded(17) + ratio(time, row.sqliteProcess))
    }
    print("\ntargets: first page through the whole process < 100 ms; in-process within 5x of sqlite3")
  }

  func printPlannerTargets() {
    func row(_ prefix: String) -> Row { rows.first { $0.name.hasPrefix(prefix) }! }
    let scanRow = row("full ordered scan")
    let indexedRow = row("indexed --where")
    let rangeRow = row("the same range")
    let unindexedRow = row("unindexed --where")
    print(
      """

      planner targets (warm, in process):
        indexed --where / the same range by cursor: \(ratio(indexedRow.folioInProcess, rangeRow.folioInProcess)) (target ≤ 2x)
        unindexed --where / sqlite3:                \(ratio(unindexedRow.folioInProcess, unindexedRow.sqliteInProcess)) (target ≤ 3x)
        full ordered scan / sqlite3:                \(ratio(scanRow.folioInProcess, scanRow.sqliteInProcess)) (target ≤ 1.5x)
      """)
  }

  /// Cold: the page cache dropped before each whole process (Folio without
  /// a publisher, as a first process after a reboot would run).
  func measureCold() throws {
    let scanCLI = ["query", "flights", "--order-by-child", "dep_delay", "--format", "ndjson"]
    let scanSQL = "SELECT doc FROM flights ORDER BY dep_delay, id"
    let cold: [(String, [String], String)] = [
      // What every query without a publisher pays first: the stat of every
      // file, here with a one-document page after it.
      ("first page, limit 1 (the stat check)", ["query", "flights", "--limit-to-first", "1"], Self.firstSQL),
      ("indexed --where", ["query", "flights", "--where", Self.indexedWhere], Self.indexedSQL),
      (
        "unindexed --where, count", ["query", "flights", "--where", Self.unindexedWhere, "--count"],
        Self.unindexedSQL
      ),
      ("full ordered scan", scanCLI, scanSQL),
    ]
    guard dropCaches() else {
      print("\ncold: not measured: writing 3 to /proc/sys/vm/drop_caches is not permitted here")
      return
    }
    print("\ncold (page cache dropped before each process; one run each):")
    print(
      "query".padded(40) + "Folio process".padded(15) + "sqlite3 process".padded(17) + "ratio (target ≤ 3x)")
    for (name, arguments, sql) in cold {
      _ = dropCaches()
      let folioTime = try spawnTimed(folio, ["-C", storePath] + arguments)
      _ = dropCaches()
      let sqliteTime = try spawnTimed("/usr/bin/sqlite3", [databasePath, sql])
      print(
        name.padded(40) + ms(folioTime).padded(15) + ms(sqliteTime).padded(17) + ratio(folioTime, sqliteTime))
    }
  }
}

private func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2fx", a / max(b, 1e-9)) }

/// Drops the page cache (`echo 3 > /proc/sys/vm/drop_caches`) after a
/// sync; false where that is not permitted.
private func dropCaches() -> Bool {
  sync()
  let fd = open("/proc/sys/vm/drop_caches", O_WRONLY)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  return write(fd, "3\n", 2) == 2
}

private func generateFlights(count: Int, storePath: String, databasePath: String, root: String) throws {
  try "version: 1\ntables:\n  flights:\n    path: flights\n    order: [dep_delay]\n".write(
    toFile: storePath + "/folio.yaml", atomically: true, encoding: .utf8)
  var state: UInt64 = 7
  func random(_ bound: Int) -> Int {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Int((state >> 33) % UInt64(bound))
  }
  let airlines = ["AA", "AS", "B6", "DL", "EV", "F9", "HA", "MQ", "NK", "OO", "UA", "US", "VX", "WN"]
  let airports = ["ATL", "BOS", "DEN", "DFW", "JFK", "LAX", "ORD", "SEA", "SFO", "MSP", "PHX", "IAH"]
  var csv = ""
  csv.reserveCapacity(count * 300)
  for i in 0..<count {
    let cancelled = random(60) == 0
    // Delays in whole minutes: many ties, as in real flight data.
    let delay: JSONValue = cancelled ? .null : .integer(random(10) < 6 ? random(16) - 10 : random(400) - 20)
    let doc: JSONValue = [
      "id": .string("f\(i)"), "year": 2015, "month": .integer(1 + random(12)),
      "day": .integer(1 + random(28)),
      "airline": .string(airlines[random(airlines.count)]), "flight_number": .integer(random(7000)),
      "tail_number": .string("N\(random(999))\(airlines[random(4)])"),
      "origin": .string(airports[random(airports.count)]), "dest": .string(airports[random(airports.count)]),
      "scheduled_departure": .integer(random(2400)), "dep_delay": delay, "taxi_out": .integer(random(40)),
      "distance": .integer(100 + random(2500)), "arr_delay": cancelled ? .null : .integer(random(300) - 50),
      "diverted": .bool(random(100) == 0), "cancelled": .bool(cancelled),
      "cancellation_reason": cancelled ? .string("B") : .null,
    ]
    let bytes = doc.canonicalBytes()
    let fd = open(storePath + "/flights/f\(i).json", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0, "cannot create a document file")
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    let compact = doc.compactString.replacingOccurrences(of: "\"", with: "\"\"")
    csv += "f\(i),\(delay.isNull ? "" : delay.compactString),\(doc["airline"]!.stringValue!),\"\(compact)\"\n"
  }
  try csv.write(toFile: root + "/flights.csv", atomically: false, encoding: .utf8)
  let script = """
    CREATE TABLE flights(id TEXT PRIMARY KEY, dep_delay INTEGER, airline TEXT, doc TEXT);
    .mode csv
    .import \(root)/flights.csv flights
    UPDATE flights SET dep_delay = NULL WHERE dep_delay = '';
    CREATE INDEX flights_dep_delay ON flights(dep_delay, id);
    ANALYZE;
    """
  try runProcess("/usr/bin/sqlite3", [databasePath], input: script)
  try? FileManager.default.removeItem(atPath: root + "/flights.csv")
}

/// Runs a query through the sqlite3 CLI: the whole process's time, and the
/// statement's own time. sqlite's `.timer` counts whole milliseconds, too
/// coarse for an indexed page, so the statement's time is taken from one
/// process that runs it `repeats` times, less a process that runs nothing.
private func sqliteTimed(_ database: String, _ sql: String, repeats: Int) throws -> (
  statement: Double, process: Double
) {
  let process = try spawnTimed("/usr/bin/sqlite3", [database, sql])
  var start = benchNow()
  try runProcess("/usr/bin/sqlite3", [database], input: "")
  let empty = benchNow() - start
  start = benchNow()
  try runProcess("/usr/bin/sqlite3", [database], input: String(repeating: sql + ";\n", count: repeats))
  let batch = benchNow() - start
  return (max(batch - empty, 0) / Double(repeats), process)
}

private func sqliteIDs(_ database: String, _ sql: String) throws -> [String] {
  let output = try runProcess("/usr/bin/sqlite3", [database, sql])
  return output.split(separator: "\n").map { line in
    if let value = try? JSONValue(parsing: String(line)), let id = value["id"]?.stringValue { return id }
    return String(line)
  }
}

@discardableResult
private func runProcess(_ path: String, _ arguments: [String], input: String? = nil) throws -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  let output = Pipe()
  process.standardOutput = output
  process.standardError = FileHandle.standardError
  let stdin = Pipe()
  process.standardInput = stdin
  try process.run()
  if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
  try stdin.fileHandleForWriting.close()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else {
    fatalError("\(path) \(arguments) exited \(process.terminationStatus)")
  }
  return String(decoding: data, as: UTF8.self)
}

/// The `folio` binary built beside this folio-bench; stops the run with
/// the command that builds it when there is none.
func folioBinaryBesideBench() -> String {
  let folio = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("folio").path
  guard FileManager.default.isExecutableFile(atPath: folio) else {
    fatalError("no folio binary next to folio-bench; build it: bash scripts/build-release.sh")
  }
  return folio
}

/// Runs `path` with stdout to /dev/null and returns its wall time, from
/// `posix_spawn` to `waitpid`: the whole process as a shell would see it,
/// without the tens of milliseconds Foundation's `Process` adds around it.
@discardableResult
func spawnTimed(_ path: String, _ arguments: [String]) throws -> Double {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
  let argv = ([path] + arguments).map { strdup($0) } + [nil]
  defer { for pointer in argv { free(pointer) } }
  var pid: pid_t = 0
  let start = benchNow()
  let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
  guard rc == 0 else { fatalError("cannot run \(path): \(String(cString: strerror(rc)))") }
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  let seconds = benchNow() - start
  guard status == 0 else { fatalError("\(path) \(arguments) exited with status \(status)") }
  return seconds
}

func benchMedianOf(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted[sorted.count / 2]
}

private func benchMedian(_ runs: Int, _ body: () throws -> Void) throws -> Double {
  try body()  // warm-up
  return benchMedianOf(
    try (0..<runs).map { _ in
      let start = benchNow()
      try body()
      return benchNow() - start
    })
}

private func ms(_ seconds: Double) -> String {
  seconds < 0.01 ? String(format: "%.2f ms", seconds * 1000) : String(format: "%.0f ms", seconds * 1000)
}

extension String {
  fileprivate func padded(_ width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}
