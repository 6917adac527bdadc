import Folio
import Foundation
import Synchronization

// folio-bench serve: `folio serve` against Datasette, with wrk as the load.
// One table of --docs documents (pk `d0`…, order key `rank`), exported by
// Folio to SQLite (primary key and an index on `rank`) for Datasette to
// serve the same rows. Measured in one run:
// - GET of one document by key (random keys): requests/s and p99;
// - a 20-row ordered page (`orderBy="rank"&limitToFirst=20` against
//   Datasette's `?_sort=rank&_size=20`);
// - PATCH of one field on random documents from --connections clients
//   (Folio only: Datasette's writes need a plugin); concurrent requests
//   share transactions (group commit);
// - the delay from a PATCH to the stream event at another client, and from
//   a file saved the way `sed -i` saves (a new file renamed over) to the
//   event, p50 and p99.
// wrk (Debian) and Datasette (PyPI, in a virtual environment under
// .build/bench-venv) are installed when missing.

private struct ServeBenchOptions {
  var docs = 100_000
  var seconds = 10
  var connections = 32
  var samples = 200
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
      case "--seconds": seconds = next()
      case "--connections": connections = next()
      case "--samples": samples = next()
      case "--keep": keep = true
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench serve [--docs N] [--seconds N] [--connections N] [--samples N] [--keep]
            --docs N         documents in the table (default 100000)
            --seconds N      length of each wrk run (default 10)
            --connections N  wrk's concurrent connections (default 32)
            --samples N      stream delays timed per kind (default 200)
            --keep           keep the scratch store and print its path
          """)
        exit(0)
      default: fatalError("unknown option \(arguments[i]); see --help")
      }
      i += 1
    }
  }
}

/// Runs a shell command, returning its stdout; stops the benchmark when it fails.
@discardableResult
private func sh(_ command: String, quiet: Bool = false) -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", command]
  let out = Pipe()
  process.standardOutput = out
  if quiet { process.standardError = FileHandle.nullDevice }
  try! process.run()
  let data = out.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else {
    fatalError("failed (\(process.terminationStatus)): \(command)")
  }
  return String(decoding: data, as: UTF8.self)
}

/// wrk's figures for one run.
private struct WrkResult {
  var requestsPerSecond: Double
  var p99ms: Double
  var errors: String?
}

private func wrk(_ url: String, script: String, options: ServeBenchOptions) -> WrkResult {
  let text = sh(
    "wrk -t2 -c\(options.connections) -d\(options.seconds)s --latency -s \(script) '\(url)'")
  var result = WrkResult(requestsPerSecond: 0, p99ms: 0)
  for line in text.split(separator: "\n") {
    let fields = line.split(separator: " ", omittingEmptySubsequences: true)
    if line.hasPrefix("Requests/sec:") { result.requestsPerSecond = Double(fields[1]) ?? 0 }
    if fields.first == "99%", fields.count > 1 { result.p99ms = milliseconds(String(fields[1])) }
    if line.contains("Non-2xx") || line.contains("Socket errors") {
      result.errors = line.trimmingCharacters(in: .whitespaces)
    }
  }
  return result
}

/// wrk's `1.23ms`, `850.00us`, `1.02s` in milliseconds.
private func milliseconds(_ text: String) -> Double {
  for (suffix, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(suffix) {
    return (Double(text.dropLast(suffix.count)) ?? 0) * scale
  }
  return Double(text) ?? 0
}

/// A wrk script that requests `method` on `prefix<random pk><suffix>`.
private func wrkScript(
  _ path: String, method: String, prefix: String, suffix: String, docs: Int, body: String? = nil
) throws {
  let bodyLine = body.map { "wrk.body = '\($0)'\nwrk.headers[\"Content-Type\"] = \"application/json\"" } ?? ""
  try """
  math.randomseed(7)
  wrk.method = "\(method)"
  \(bodyLine)
  request = function()
    return wrk.format(nil, "\(prefix)" .. "d" .. math.random(0, \(docs - 1)) .. "\(suffix)")
  end
  """.write(toFile: path, atomically: true, encoding: .utf8)
}

/// Waits until something answers HTTP at `url`.
private func waitForHTTP(_ url: String) {
  for _ in 0..<300 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-o", "/dev/null", "--max-time", "1", url]
    try? process.run()
    process.waitUntilExit()
    if process.terminationStatus == 0 { return }
    usleep(100_000)
  }
  fatalError("nothing answers at \(url)")
}

/// One keep-alive HTTP/1.1 connection to 127.0.0.1, for timed requests
/// without a process start in the way.
private final class RawHTTP {
  let fd: Int32
  /// The `Host` header: the server answers only to its own names.
  let host: String

  init(port: Int) {
    host = "127.0.0.1:\(port)"
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    precondition(connected == 0, "cannot connect to port \(port)")
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  deinit { close(fd) }

  func send(_ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      precondition(n > 0, "write failed")
      offset += n
    }
  }

  /// Sends a request and reads its whole reply (Content-Length bodies).
  func request(_ method: String, _ path: String, body: String) {
    send("\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = read(fd, &buffer, buffer.count)
      precondition(n > 0, "the server closed the connection")
      data += buffer[..<n]
      let text = String(decoding: data, as: UTF8.self)
      guard let end = text.range(of: "\r\n\r\n") else { continue }
      let head = text[..<end.lowerBound].lowercased()
      let length =
        head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
        .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
      if text.utf8.count - text[..<end.upperBound].utf8.count >= length { return }
    }
  }
}

/// An event stream read on its own thread; `wait(for:)` returns when a
/// text has arrived.
private final class StreamWatcher: @unchecked Sendable {
  // @unchecked: `received` is guarded by `condition`; `connection` is only
  // read by the reading thread after init.
  private let connection: RawHTTP
  private let condition = NSCondition()
  private var received = ""

  init(port: Int, path: String) {
    connection = RawHTTP(port: port)
    connection.send("GET \(path) HTTP/1.1\r\nHost: \(connection.host)\r\nAccept: text/event-stream\r\n\r\n")
    let fd = connection.fd
    Thread { [self] in
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { return }
        condition.lock()
        received += String(decoding: buffer[..<n], as: UTF8.self)
        // Keep the tail only: a marker is searched for right after its write.
        if received.utf8.count > 1 << 20 { received = String(received.suffix(4096)) }
        condition.broadcast()
        condition.unlock()
      }
    }.start()
  }

  /// Blocks until `marker` has arrived; returns the wall time then.
  func wait(for marker: String) -> Double {
    condition.lock()
    defer { condition.unlock() }
    while !received.contains(marker) {
      if !condition.wait(until: Date().addingTimeInterval(10)) { fatalError("no event with \(marker)") }
    }
    received = ""
    return Date().timeIntervalSince1970
  }
}

private func percentile(_ values: [Double], _ p: Double) -> Double {
  let sorted = values.sorted()
  return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func runServeBenchmark(_ arguments: [String]) throws {
  let options = ServeBenchOptions(arguments)
  let venv = FileManager.default.currentDirectoryPath + "/.build/bench-venv"
  let peers = installServePeers(venv: venv)
  let root = NSTemporaryDirectory() + "/folio-serve-bench-\(getpid())"
  try? FileManager.default.removeItem(atPath: root)
  try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
  defer { if !options.keep { try? FileManager.default.removeItem(atPath: root) } }
  print("serve: \(options.docs) documents, wrk \(options.connections) connections × \(options.seconds) s")
  print("peers: \(peers)")
  let store = try makeServeBenchStore(root: root, docs: options.docs)

  // Folio in this process; Datasette in its own.
  var serveOptions = ServeOptions()
  serveOptions.port = 18_600 + Int(getpid() % 300)
  serveOptions.quiet = true
  serveOptions.maxStreams = 16
  let server = try RESTServer(store: store, options: serveOptions)
  try server.start()
  defer { server.stop() }
  let folio = "http://127.0.0.1:\(serveOptions.port)"
  let datasettePort = serveOptions.port + 1
  let datasette = try startDatasette(venv: venv, database: root + "/items.db", port: datasettePort)
  defer {
    kill(datasette.processIdentifier, SIGTERM)
    datasette.waitUntilExit()
  }
  let peer = "http://127.0.0.1:\(datasettePort)"
  waitForHTTP(folio + "/items/d0.json")
  waitForHTTP(peer + "/items/items/d0.json")
  // The same row from both, as a check that they serve the same data.
  let folioRow = sh("curl -s '\(folio)/items/d42/title.json'")
  let peerRow = sh("curl -s '\(peer)/items/items/d42.json?_shape=objects'")
  precondition(
    folioRow == #""item 42""# && peerRow.contains("item 42"), "the servers disagree: \(folioRow) / \(peerRow)"
  )
  try measureWrkRows(folio: folio, peer: peer, root: root, store: store, options: options)
  try measureLargePatch(folio: folio, root: root)
  try measurePage(venv: venv, root: root, folio: folio, peer: peer)
  try measureStreamDelays(port: serveOptions.port, root: root, samples: options.samples)
  if options.keep { print("kept: \(root)") }
}

/// Installs the peers when missing (Debian's wrk; Datasette from PyPI in
/// `venv`) and returns their versions.
private func installServePeers(venv: String) -> String {
  if !FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk") {
    print("installing wrk (apt-get)")
    sh(
      "apt-get install -y -q wrk >/dev/null || (apt-get update -q >/dev/null && apt-get install -y -q wrk >/dev/null)"
    )
  }
  if !FileManager.default.isExecutableFile(atPath: venv + "/bin/datasette") {
    print("installing datasette (PyPI) in \(venv)")
    sh("python3 -m venv \(venv) && \(venv)/bin/pip install -q datasette")
  }
  let datasetteVersion = sh("\(venv)/bin/datasette --version").trimmingCharacters(in: .whitespacesAndNewlines)
  let wrkVersion = sh("wrk -v 2>&1 | head -1 || true").trimmingCharacters(in: .whitespacesAndNewlines)
  return "\(datasetteVersion); \(wrkVersion)"
}

/// A store at `root` whose table `items` holds `docs` documents ordered by
/// `rank`, exported to `root/items.db` for Datasette.
private func makeServeBenchStore(root: String, docs: Int) throws -> Store {
  try """
  version: 1
  tables:
    items:
      path: items
      order: [rank]
  """.write(toFile: root + "/folio.yaml", atomically: true, encoding: .utf8)
  let store = try Store.create(at: URL(fileURLWithPath: root))
  var i = 0
  while i < docs {
    let end = min(docs, i + 2_000)
    try store.write { tx in
      for n in i..<end {
        try tx.apply(
          table: "items", pk: "d\(n)", op: .insert,
          columns: ["rank": .integer((n * 7919) % docs), "title": .string("item \(n)"), "views": 0])
      }
    }
    i = end
  }
  var export = ExportOptions()
  export.format = .sqlite
  export.outputPath = root + "/items.db"
  try store.exportRows(from: "items", options: export)
  return store
}

/// Datasette serving `database` on 127.0.0.1:`port`, in a process of its own.
private func startDatasette(venv: String, database: String, port: Int) throws -> Process {
  let datasette = Process()
  datasette.executableURL = URL(fileURLWithPath: venv + "/bin/datasette")
  datasette.arguments = ["serve", database, "--port", "\(port)", "--host", "127.0.0.1"]
  datasette.standardOutput = FileHandle.nullDevice
  datasette.standardError = FileHandle.nullDevice
  try datasette.run()
  return datasette
}

/// wrk against both servers: a document by key and an ordered page; then
/// PATCHes from many clients against Folio alone, with a count of the
/// increments that landed.
private func measureWrkRows(
  folio: String, peer: String, root: String, store: Store, options: ServeBenchOptions
) throws {
  try wrkScript(
    root + "/get-folio.lua", method: "GET", prefix: "/items/", suffix: ".json", docs: options.docs)
  try wrkScript(
    root + "/get-peer.lua", method: "GET", prefix: "/items/items/", suffix: ".json?_shape=objects",
    docs: options.docs)
  try wrkScript(
    root + "/patch.lua", method: "PATCH", prefix: "/items/", suffix: ".json", docs: options.docs,
    body: #"{"views":{".sv":{"increment":1}}}"#)
  // A page: the same request every time (no random key in it).
  try """
  wrk.method = "GET"
  """.write(toFile: root + "/page.lua", atomically: true, encoding: .utf8)

  func report(_ name: String, _ folioResult: WrkResult, _ peerResult: WrkResult?) {
    var line =
      "\(name): Folio \(Int(folioResult.requestsPerSecond)) req/s (p99 \(String(format: "%.2f", folioResult.p99ms)) ms)"
    if let peerResult {
      line +=
        ", Datasette \(Int(peerResult.requestsPerSecond)) req/s (p99 \(String(format: "%.2f", peerResult.p99ms)) ms)"
        + ", ratio \(String(format: "%.2f", folioResult.requestsPerSecond / peerResult.requestsPerSecond))x"
    }
    print(line)
    for error in [folioResult.errors, peerResult?.errors].compactMap({ $0 }) { print("  wrk: \(error)") }
  }

  report(
    "GET one document by key",
    wrk(folio, script: root + "/get-folio.lua", options: options),
    wrk(peer, script: root + "/get-peer.lua", options: options))
  report(
    "20-row ordered page",
    wrk(
      folio + "/items.json?orderBy=%22rank%22&limitToFirst=20", script: root + "/page.lua", options: options),
    wrk(
      peer + "/items/items.json?_sort=rank&_size=20&_shape=objects", script: root + "/page.lua",
      options: options))
  let before = try store.collection("items").query().get().reduce(0) { $0 + ($1["views"]?.intValue ?? 0) }
  let patch = wrk(folio, script: root + "/patch.lua", options: options)
  let after = try store.collection("items").query().get().reduce(0) { $0 + ($1["views"]?.intValue ?? 0) }
  report("PATCH one field, \(options.connections) clients", patch, nil)
  let opLines =
    Int(sh("cat \(root)/.folio/ops/*.ndjson | wc -l").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
  print(
    "  \(after - before) increments landed, \(String(format: "%.0f", patch.requestsPerSecond)) /s (target ≥ 2000: \(patch.requestsPerSecond >= 2000 ? "met" : "NOT met")); op log lines \(opLines)"
  )
}

/// One PATCH of 40,000 paths on one document, set then removed: linear in
/// its paths (each document read and recorded once), so a large body
/// holds the store lock for the write alone.
private func measureLargePatch(folio: String, root: String) throws {
  let paths = 40_000
  let setBody = "{" + (0..<paths).map { #""f\#($0)":\#($0)"# }.joined(separator: ",") + "}"
  let unsetBody = "{" + (0..<paths).map { #""f\#($0)":null"# }.joined(separator: ",") + "}"
  try setBody.write(toFile: root + "/patch-set.json", atomically: true, encoding: .utf8)
  try unsetBody.write(toFile: root + "/patch-unset.json", atomically: true, encoding: .utf8)
  var setTimes: [Double] = []
  var unsetTimes: [Double] = []
  var single: [Double] = []
  func timed(_ body: String) -> Double {
    let out = sh(
      "curl -s -o /dev/null -w '%{http_code} %{time_total}' -X PATCH --data-binary @\(body) '\(folio)/items/d9.json'"
    )
    let parts = out.split(separator: " ")
    precondition(parts.first == "200", "PATCH failed: \(out)")
    return (Double(parts.last ?? "") ?? .nan) * 1000
  }
  try #"{"title":"one path"}"#.write(toFile: root + "/patch-one.json", atomically: true, encoding: .utf8)
  for _ in 0..<5 {
    setTimes.append(timed(root + "/patch-set.json"))
    unsetTimes.append(timed(root + "/patch-unset.json"))
    single.append(timed(root + "/patch-one.json"))
  }
  let oneMs = percentile(single, 0.5)
  print(
    "PATCH of \(paths) paths in one body (median of 5): set \(String(format: "%.0f", percentile(setTimes, 0.5))) ms, removed \(String(format: "%.0f", percentile(unsetTimes, 0.5))) ms; one path \(String(format: "%.2f", oneMs)) ms, ratio \(String(format: "%.0f", percentile(setTimes, 0.5) / oneMs))x for \(paths)x the paths"
  )
}

/// The page: from navigation to the first grid page drawn, in Chromium,
/// against Datasette's table page of as many rows.
private func measurePage(venv: String, root: String, folio: String, peer: String) throws {
  guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
    print("page: not measured: no /usr/bin/chromium (scripts/install-deps.sh installs it)")
    return
  }
  if sh("\(venv)/bin/python -c 'import playwright' >/dev/null 2>&1 && echo yes || true", quiet: true)
    .isEmpty
  {
    print("installing playwright (PyPI) in \(venv)")
    sh("\(venv)/bin/pip install -q playwright")
  }
  try pageScript.write(toFile: root + "/page_bench.py", atomically: true, encoding: .utf8)
  let out = sh("\(venv)/bin/python \(root)/page_bench.py \(folio) \(peer) 11")
  let times = out.split(separator: " ").compactMap {
    Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
  }
  guard times.count == 2 else {
    print("page: not measured: \(out)")
    return
  }
  print(
    "page: first grid of 50 rows after navigation (median of 11): Folio \(String(format: "%.0f", times[0])) ms, "
      + "Datasette's table page \(String(format: "%.0f", times[1])) ms, ratio \(String(format: "%.2f", times[0] / times[1]))x "
      + "(target < 300 ms: \(times[0] < 300 ? "met" : "NOT met"))")
}

/// Stream delays: a PATCH on one connection and the event on another; then
/// a save the way `sed -i` makes it (a new file renamed over the old) and
/// its event.
private func measureStreamDelays(port: Int, root: String, samples: Int) throws {
  let stream = StreamWatcher(port: port, path: "/items/d7.json")
  _ = stream.wait(for: "event: put")
  let writer = RawHTTP(port: port)
  var delays: [Double] = []
  for n in 0..<samples {
    let start = Date().timeIntervalSince1970
    writer.request("PATCH", "/items/d7.json", body: #"{"seq":\#(1_000_000 + n)}"#)
    let arrived = stream.wait(for: #""seq":\#(1_000_000 + n)"#)
    delays.append((arrived - start) * 1000)
  }
  let patchP99 = percentile(delays, 0.99)
  print(
    "SSE PATCH → event: p50 \(String(format: "%.2f", percentile(delays, 0.5))) ms, p99 \(String(format: "%.2f", patchP99)) ms (target < 50: \(patchP99 < 50 ? "met" : "NOT met"))"
  )
  let file = root + "/items/d7.json"
  var saves: [Double] = []
  for n in 0..<samples {
    let text =
      "{\n  \"id\": \"d7\",\n  \"rank\": 7,\n  \"seq\": \(2_000_000 + n),\n  \"title\": \"item 7\"\n}\n"
    let start = Date().timeIntervalSince1970
    try text.write(toFile: file, atomically: true, encoding: .utf8)
    let arrived = stream.wait(for: #""seq":\#(2_000_000 + n)"#)
    saves.append((arrived - start) * 1000)
    usleep(2_000)
  }
  print(
    "SSE file save → event: p50 \(String(format: "%.2f", percentile(saves, 0.5))) ms, p99 \(String(format: "%.2f", percentile(saves, 0.99))) ms"
  )
}

/// Times, in headless Chromium, navigation to the first page of 50 rows
/// drawn: Folio's page (`?t=items`, its grid filled from the live query)
/// and Datasette's table page (`?_size=50`, drawn by the server). Prints
/// the two medians in milliseconds.
private let pageScript = #"""
  import statistics, sys
  from playwright.sync_api import sync_playwright

  folio, peer, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
  with sync_playwright() as p:
      browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
      page = browser.new_page(viewport={"width": 1280, "height": 800})
      def timed(url, rows):
          page.goto("about:blank")
          page.goto(url, wait_until="commit")
          page.wait_for_function(f"document.querySelectorAll({rows!r}).length >= 50", timeout=30_000)
          return page.evaluate("performance.now()")
      ours, theirs = [], []
      for _ in range(runs):
          ours.append(timed(folio + "/?t=items", "#rows tr"))
          theirs.append(timed(peer + "/items/items?_size=50", "table.rows-and-columns tbody tr"))
      browser.close()
  print(statistics.median(ours), statistics.median(theirs))
  """#
