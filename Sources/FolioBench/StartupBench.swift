import Folio
import Foundation

// folio-bench startup: Folio as a user mostly meets it, as whole processes
// (a shell loop, a script, `watch -n1 folio get …`), against sqlite3 on the
// same rows and against a hello-world Swift binary built here the way
// folio is (release, the Swift runtime linked in). Each command runs in
// turn with its peer, R times; medians, and the ratio folio/peer.
// Run: bash scripts/build-release.sh && .build/release/folio-bench startup [--runs R]

struct StartupBenchOptions {
  var runs = 21
  var documents = 1_000
  var bigDocuments = 100_000
  var directory = NSTemporaryDirectory() + "/folio-startup-bench"

  init(_ arguments: [String]) {
    forEachBenchArgument(arguments) { flag, value in
      switch flag {
      case "--runs": runs = max(1, Int(value()) ?? runs)
      case "--docs": documents = max(2, Int(value()) ?? documents)
      case "--big": bigDocuments = max(100, Int(value()) ?? bigDocuments)
      case "--dir": directory = value()
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench startup [--runs R] [--docs N] [--big N] [--dir DIR]
            --runs R   runs of each command, taken in turn with its peer; medians (default 21)
            --docs N   documents in the small table, and rows in sqlite3's (default 1000)
            --big N    documents in the big table, queried with the index daemon answering (default 100000)
            --dir DIR  scratch directory (default $TMPDIR/folio-startup-bench; emptied first)

          Needs swiftc (PATH, or /opt/swift/usr/bin) for the hello world, and sqlite3.
          """)
        exit(0)
      default: fatalError("unknown option \(flag); see --help")
      }
    }
  }
}

func runStartupBenchmark(_ arguments: [String]) throws {
  let options = StartupBenchOptions(arguments)
  let root = options.directory
  shell("rm -rf '\(root)' && mkdir -p '\(root)/hello' '\(root)/store/small'", in: "/")
  let folio = folioBinaryBesideBench()
  guard
    let sqlite = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first(
      where: FileManager.default.isExecutableFile)
  else { fatalError("no sqlite3; install it: apt-get install sqlite3") }
  let hello = buildHelloWorld(in: root + "/hello")
  let store = try makeStartupStores(root: root, options: options, sqlite: sqlite)
  let database = root + "/small.sqlite"
  defer { shell("'\(folio)' -C '\(root)/store' index-daemon --stop >/dev/null 2>&1; true", in: "/") }

  // The big table's queries are answered by an index daemon, started here
  // and ready (its first check done) before the rows.
  setenv("FOLIO_INDEX_DAEMON", "auto", 1)
  // A query of this process that finds no publisher starts it, detached.
  store.startIndexDaemonOnDemand(executable: folio)
  _ = try store.collection("big").query().limitToFirst(1).get()
  var waited = 0
  while store.indexDaemonStatus() == .none, waited < 1000 {
    usleep(10_000)
    waited += 1
  }
  guard case .daemon = store.indexDaemonStatus() else { fatalError("the index daemon did not start") }
  let bigQuery = ["-C", root + "/store", "query", "big", "--limit-to-first", "20"]
  _ = try spawnTimed(folio, bigQuery)
  let bigWhere = [
    "-C", root + "/store", "query", "big", "--where", "n >= \(options.bigDocuments - 20)", "--count",
  ]
  let tail = options.bigDocuments - 20
  func json(_ table: String) -> String {
    "SELECT json_object('id', id, 'title', title, 'n', n) FROM \(table)"
  }
  let rows: [StartupRow] = [
    StartupRow(label: "folio --version", folio: ["--version"], peerLabel: "hello world", peer: (hello, [])),
    StartupRow(
      label: "folio get small k1", folio: ["-C", root + "/store", "get", "small", "k1"],
      peerLabel: "sqlite3 one row by key", peer: (sqlite, [database, json("small") + " WHERE id = 'k1'"])),
    StartupRow(
      label: "folio query small --limit-to-first 20",
      folio: ["-C", root + "/store", "query", "small", "--limit-to-first", "20"],
      peerLabel: "sqlite3 first 20 by key",
      peer: (sqlite, [database, json("small") + " ORDER BY id LIMIT 20"])),
    StartupRow(
      label: "folio query big --limit-to-first 20 (\(options.bigDocuments), daemon answering)",
      folio: bigQuery,
      peerLabel: "sqlite3 first 20 by key", peer: (sqlite, [database, json("big") + " ORDER BY id LIMIT 20"])),
    StartupRow(
      label: "folio query big --where 'n >= \(tail)' --count (unindexed, daemon answering)", folio: bigWhere,
      peerLabel: "sqlite3 count, no index",
      peer: (sqlite, [database, "SELECT count(*) FROM big WHERE n >= \(tail)"])
    ),
  ]
  print(
    "whole processes, medians of \(options.runs) taken in turn (\(options.documents) documents; ratio folio/peer):"
  )
  for row in rows { try row.measure(folio: folio, runs: options.runs) }
}

/// The hello world, built the default way with the Swift runtime linked
/// in, as folio has it (scripts/build-release.sh goes further).
private func buildHelloWorld(in folder: String) -> String {
  let swiftc =
    ["/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc"].first(where: FileManager.default.isExecutableFile)
    ?? "swiftc"
  try! "print(\"hello\")\n".write(toFile: folder + "/main.swift", atomically: true, encoding: .utf8)
  let built = shell("'\(swiftc)' -O -static-stdlib main.swift -o hello", in: folder)
  precondition(built.status == 0, "cannot build the hello world: \(built.output)")
  return folder + "/hello"
}

/// The same rows in a Folio store's tables `small` and `big` (committed)
/// and in SQLite tables of the same names (`root/small.sqlite`).
private func makeStartupStores(root: String, options: StartupBenchOptions, sqlite: String) throws -> Store {
  try """
  version: 1
  tables:
    small:
      path: small
    big:
      path: big
  """.write(toFile: root + "/store/folio.yaml", atomically: true, encoding: .utf8)
  shell("mkdir -p '\(root)/store/big'", in: "/")
  var sql = ""
  for (table, count) in [("small", options.documents), ("big", options.bigDocuments)] {
    sql += "CREATE TABLE \(table) (id TEXT PRIMARY KEY, title TEXT, n INTEGER);\nBEGIN;\n"
    for i in 0..<count {
      let document: JSONObject = [
        "id": .string("k\(i)"), "title": .string("item \(i)"), "n": .number(String(i)),
      ]
      _ = FileManager.default.createFile(
        atPath: root + "/store/\(table)/k\(i).json",
        contents: Data(JSONValue.object(document).canonicalBytes()))
      sql += "INSERT INTO \(table) VALUES ('k\(i)', 'item \(i)', \(i));\n"
    }
    sql += "COMMIT;\n"
  }
  try sql.write(toFile: root + "/small.sql", atomically: true, encoding: .utf8)
  shell("git init -q -b main store", in: root)
  let store = try Store.create(at: URL(fileURLWithPath: root + "/store"))
  try store.commit(message: "startup bench")
  let loaded = shell("'\(sqlite)' small.sqlite < small.sql", in: root)
  precondition(loaded.status == 0, loaded.output)
  return store
}

/// One row of `folio-bench startup`: a `folio` command and its peer.
private struct StartupRow {
  var label: String
  var folio: [String]
  var peerLabel: String
  var peer: (String, [String])

  /// Runs both `runs` times, taken in turn, and prints the medians.
  func measure(folio executable: String, runs: Int) throws {
    // One of each first, untimed: the page cache and the index daemon
    // (which a query may start) are warm for both.
    _ = try spawnTimed(executable, folio)
    _ = try spawnTimed(peer.0, peer.1)
    var folioTimes: [Double] = []
    var peerTimes: [Double] = []
    for turn in 0..<runs {
      if turn % 2 == 0 {
        folioTimes.append(try spawnTimed(executable, folio))
        peerTimes.append(try spawnTimed(peer.0, peer.1))
      } else {
        peerTimes.append(try spawnTimed(peer.0, peer.1))
        folioTimes.append(try spawnTimed(executable, folio))
      }
    }
    let folioMedian = benchMedianOf(folioTimes)
    let peerMedian = benchMedianOf(peerTimes)
    print(
      String(
        format: "  %@ %.1f ms, %@ %.1f ms: %.2fx", label, folioMedian * 1000, peerLabel, peerMedian * 1000,
        folioMedian / peerMedian))
  }
}
