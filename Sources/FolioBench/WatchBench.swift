import Folio
import Foundation
import Synchronization

/// `folio-bench watch`: the watcher on a large table. Measures startup and
/// catch-up on unchanged documents, the latency from a save to its op (the
/// debounce included), and CPU use while idle.
enum WatchBench {
  struct Settings {
    var docs = 100_000
    var saves = 1_000
    var idleSeconds = 60.0
    var debounce = Duration.milliseconds(50)
    var work: String?

    init(_ arguments: [String]) {
      var i = 0
      func next() -> String {
        i += 1
        guard i < arguments.count else { fatalError("option \(arguments[i - 1]) needs a value") }
        return arguments[i]
      }
      while i < arguments.count {
        switch arguments[i] {
        case "--docs": docs = Int(next()) ?? docs
        case "--saves": saves = Int(next()) ?? saves
        case "--idle": idleSeconds = Double(next()) ?? idleSeconds
        case "--debounce": debounce = (try? Duration(parsing: next())) ?? debounce
        case "--work": work = next()
        case "-h", "--help":
          print(
            """
            USAGE: folio-bench watch [--docs N] [--saves N] [--idle SECONDS] [--debounce DURATION]
              --docs N        documents in the table (default 100000)
              --saves N       scripted saves, mixed patterns (default 1000)
              --idle SECONDS  idle period whose CPU time is measured (default 60)
              --debounce D    the watcher's debounce (default 50ms)
              --work DIR      build the store in DIR and keep it; a later run with the
                              same DIR and --docs reuses it (setup takes minutes)
            """)
          exit(0)
        default: fatalError("unknown option \(arguments[i]); see --help")
        }
        i += 1
      }
    }
  }

  /// Collects the watcher's events with the time each arrived.
  final class Arrivals: Sendable {
    let ops = Mutex<[String: Double]>([:])
    let ready = Mutex<Double?>(nil)
  }

  static func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
      + Double(usage.ru_stime.tv_sec)
      + Double(usage.ru_stime.tv_usec) / 1e6
  }

  static func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
  }

  static func main(_ arguments: [String]) throws {
    let settings = Settings(arguments)
    let root = settings.work ?? (NSTemporaryDirectory() + "/folio-watch-bench-" + UUID().uuidString)
    defer { if settings.work == nil { try? FileManager.default.removeItem(atPath: root) } }
    let marker = root + "/.git/folio-bench-docs"
    if settings.work != nil,
      (try? String(contentsOfFile: marker, encoding: .utf8)) == String(settings.docs),
      let store = try? Store(at: URL(fileURLWithPath: root)),
      try store.status().tables.allSatisfy({ $0.changedDocuments.isEmpty && $0.pendingOps == 0 })
    {
      print("watch: reusing \(settings.docs) documents in \(root)")
      try measure(store, root: root, settings: settings)
      return
    }
    try? FileManager.default.removeItem(atPath: root)
    let yaml =
      "version: 1\ntables:\n  items:\n    path: items\n    columns:\n      views: counter\n      tags: set\n"
    try FileManager.default.createDirectory(atPath: root + "/items", withIntermediateDirectories: true)
    try yaml.write(toFile: root + "/folio.yaml", atomically: true, encoding: .utf8)
    let store = try Store.create(at: URL(fileURLWithPath: root))
    print("watch: writing and committing \(settings.docs) documents…")
    let start = now()
    for i in 0..<settings.docs {
      let text =
        "{\n  \"id\": \"d\(i)\",\n  \"tags\": [\n    \"a\"\n  ],\n  \"title\": \"item \(i)\",\n  \"views\": 0\n}\n"
      try text.write(toFile: root + "/items/d\(i).json", atomically: false, encoding: .utf8)
    }
    // git's own add and commit write the index with stat data, as Folio's
    // commit does, and are faster at a first commit of many loose files.
    for command in [["add", "-A"], ["commit", "-q", "-m", "bench"]] {
      let git = Process()
      git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
      git.arguments = ["-C", root] + command
      try git.run()
      git.waitUntilExit()
      guard git.terminationStatus == 0 else { fatalError("git \(command[0]) failed") }
    }
    let status = try store.status()
    guard status.tables.allSatisfy({ $0.changedDocuments.isEmpty }) else { fatalError("setup left changes") }
    print(String(format: "  setup %.1f s", now() - start))
    try String(settings.docs).write(toFile: marker, atomically: true, encoding: .utf8)
    try measure(store, root: root, settings: settings)
  }

  static func measure(_ store: Store, root: String, settings: Settings) throws {
    var start = now()

    let arrivals = Arrivals()
    let watcher = try Watcher(store: store, options: Watcher.Options(debounce: settings.debounce)) { event in
      switch event {
      case .recorded(_, let file):
        let time = now()
        arrivals.ops.withLock { $0[file] = time }
      case .ready:
        let time = now()
        arrivals.ready.withLock { $0 = time }
      default: break
      }
    }
    start = now()
    let thread = Thread { try? watcher.run() }
    thread.start()
    while arrivals.ready.withLock({ $0 }) == nil { usleep(1_000) }
    let startup = arrivals.ready.withLock { $0! } - start

    // Saves, one at a time; each waits for its op before the next.
    var latencies: [Double] = []
    var generator = SystemRandomNumberGenerator()
    for n in 0..<settings.saves {
      let i = Int.random(in: 0..<settings.docs, using: &generator)
      let file = "items/d\(i).json"
      let path = root + "/" + file
      let text =
        "{\"id\": \"d\(i)\", \"tags\": [\"a\", \"s\(n)\"], \"title\": \"item \(i) save \(n)\", \"views\": \(n + 1)}\n"
      arrivals.ops.withLock { $0[file] = nil }
      switch n % 3 {
      case 0:  // in place
        try text.write(toFile: path, atomically: false, encoding: .utf8)
      case 1:  // temp then rename (sed -i, most editors)
        try text.write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        rename(path + ".tmp", path)
      default:  // vim: rename the original away, write anew
        rename(path, path + "~")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        unlink(path + "~")
      }
      let saved = now()
      while arrivals.ops.withLock({ $0[file] }) == nil {
        if now() - saved > 10 { fatalError("no op for \(file) after 10 s") }
        usleep(200)
      }
      latencies.append(arrivals.ops.withLock { $0[file]! } - saved)
    }

    let cpuBefore = cpuSeconds()
    let idleStart = now()
    Thread.sleep(forTimeInterval: settings.idleSeconds)
    let idleCPU = cpuSeconds() - cpuBefore
    let idleWall = now() - idleStart
    watcher.stop()
    // Untimed: leaves the store clean, so `--work` can reuse it.
    while thread.isExecuting { usleep(1_000) }
    _ = try store.commit(message: "bench saves")

    print(
      String(
        format: "  startup and catch-up, %d unchanged documents: %.2f s (target < 2 s)", settings.docs,
        startup))
    print(
      String(
        format: "  save to op, %d saves (debounce %.0f ms): p50 %.1f ms, p99 %.1f ms (target p99 < 100 ms)",
        latencies.count,
        Double(settings.debounce.components.seconds) * 1000 + Double(settings.debounce.components.attoseconds)
          / 1e15,
        percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000))
    print(
      String(
        format: "  idle CPU over %.0f s: %.3f s, %.3f%% of one core (target < 1%%)", idleWall, idleCPU,
        idleCPU / idleWall * 100))
    print("  save to observer event: not measured (live queries, issue 4, are not merged yet)")
  }
}
