import Folio
import Foundation
import Synchronization

/// `folio-bench watch`: the watcher on a large table. Measures startup and
/// catch-up on unchanged documents, the latency from a save to its op (the
/// debounce included) and to the event an app's `observeLocal` in another
/// process gets, and CPU use while idle.
enum WatchBench {
  struct Settings {
    var docs = 100_000
    var saves = 1_000
    var idleSeconds = 60.0
    var starts = 3
    /// Changes made while no watcher runs, before the timed catch-up start.
    var offline = 1_000
    var debounce = Duration.milliseconds(50)
    var work: String?
    /// Set in the observer process: the store to observe.
    var observe: String?

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
        case "--starts": starts = max(1, Int(next()) ?? starts)
        case "--offline": offline = max(0, Int(next()) ?? offline)
        case "--debounce": debounce = (try? DurationParser.parse(next())) ?? debounce
        case "--work": work = next()
        case "--observe": observe = next()
        case "-h", "--help":
          print(
            """
            USAGE: folio-bench watch [--docs N] [--saves N] [--idle SECONDS] [--starts N] [--debounce DURATION]
                                     [--offline N] [--work DIR]
              --docs N        documents in the table (default 100000)
              --saves N       scripted saves, mixed patterns (default 1000)
              --idle SECONDS  idle period whose CPU time is measured (default 60)
              --starts N      times the watcher is started on the unchanged table (default 3)
              --debounce D    the watcher's debounce (default 50ms)
              --offline N     changes made while stopped before the timed catch-up start:
                              a third edits, a third adds, a third deletes (default 1000)
              --work DIR      build the store in DIR and keep it; a later run with the
                              same DIR and --docs reuses it (setup takes minutes)

            The saves cycle through four patterns: in place (truncate and write), a temp
            file renamed over the original, vim's (4913, rename the original away, write
            anew, delete the backup) and sed -i's (write sedXXXXXX, rename it over).
            Another process (this program with --observe DIR) holds observeLocal on every
            saved document and reports when each save reaches it.
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
    /// Per pk, the `views` values the observer process saw, with the time.
    let observed = Mutex<[String: [(views: Int, time: Double)]]>([:])
    /// Events where the observer saw the document missing (a save's middle).
    let observedMissing = Mutex(0)
    /// The observer process said it observes every document.
    let observerReady = Mutex(false)
    /// The observer process's output ended (it exited).
    let observerDone = Mutex(false)
    /// Signalled on every op and observer event, so the saving thread
    /// sleeps instead of polling (polling would compete for the CPU with
    /// the watcher it times).
    let arrived = DispatchSemaphore(value: 0)
  }

  static func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
      + Double(usage.ru_stime.tv_sec)
      + Double(usage.ru_stime.tv_usec) / 1e6
  }

  /// CPU seconds another process has used (utime + stime from /proc).
  static func cpuSeconds(ofProcess pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = text.lastIndex(of: ")")
    else { return .nan }
    // Fields after the command name; utime and stime are fields 14 and 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
      return .nan
    }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  static func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
  }

  static func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3)
      .joined(separator: " ")
  }

  static func main(_ arguments: [String]) throws {
    let settings = Settings(arguments)
    if let root = settings.observe { try observer(root: root) }
    let root = settings.work ?? (NSTemporaryDirectory() + "/folio-watch-bench-" + UUID().uuidString)
    defer { if settings.work == nil { try? FileManager.default.removeItem(atPath: root) } }
    let marker = root + "/.git/folio-bench-docs"
    if settings.work != nil,
      (try? String(contentsOfFile: marker, encoding: .utf8)) == String(settings.docs),
      let store = try? Store(at: URL(fileURLWithPath: root)),
      try store.status().tables.allSatisfy({ $0.changedDocuments.isEmpty && $0.pendingOps == 0 })
    {
      print("watch: reusing \(settings.docs) documents in \(root)")
      try measure(root: root, settings: settings)
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
      try writeInPlace(root + "/items/d\(i).json", text)
    }
    // git's own add and commit write the index with stat data, as Folio's
    // commit does, and are faster at a first commit of many loose files;
    // gc packs the objects, as an import through Folio would. (Spawned and
    // reaped directly: Foundation's Process once missed git's exit here.)
    for command in [["add", "-A"], ["-c", "gc.auto=0", "commit", "-q", "-m", "bench"], ["gc", "-q"]] {
      let argv = (["/usr/bin/git", "-C", root] + command).map { strdup($0) } + [nil]
      defer { for pointer in argv { free(pointer) } }
      var pid: pid_t = 0
      guard posix_spawn(&pid, "/usr/bin/git", nil, nil, argv, environ) == 0 else {
        fatalError("cannot run git")
      }
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      guard status == 0 else { fatalError("git \(command.joined(separator: " ")) failed") }
    }
    let status = try store.status()
    guard status.tables.allSatisfy({ $0.changedDocuments.isEmpty }) else { fatalError("setup left changes") }
    print(String(format: "  setup %.1f s", now() - start))
    try String(settings.docs).write(toFile: marker, atomically: true, encoding: .utf8)
    try measure(root: root, settings: settings)
  }

  /// Starts a watcher on the store at `root` and waits until it is ready.
  /// - Returns: the watcher, its thread, and the seconds from opening the
  ///   store to the watcher's `ready` (catch-up included).
  static func startWatcher(root: String, settings: Settings, arrivals: Arrivals) throws -> (
    Watcher, Thread, Double
  ) {
    arrivals.ready.withLock { $0 = nil }
    let start = now()
    let store = try Store(at: URL(fileURLWithPath: root))
    let watcher = try Watcher(store: store, options: Watcher.Options(debounce: settings.debounce)) { event in
      switch event {
      case .recorded(_, let file):
        let time = now()
        arrivals.ops.withLock { $0[file] = time }
        arrivals.arrived.signal()
      case .ready:
        let time = now()
        arrivals.ready.withLock { $0 = time }
      case .problem(let error):
        print("  watcher problem: \(error)")
      default: break
      }
    }
    let thread = Thread { try? watcher.run() }
    thread.start()
    while arrivals.ready.withLock({ $0 }) == nil {
      if !thread.isExecuting && thread.isFinished { fatalError("the watcher stopped before it was ready") }
      usleep(500)
    }
    return (watcher, thread, arrivals.ready.withLock { $0! } - start)
  }

  static func stopWatcher(_ watcher: Watcher, _ thread: Thread) {
    watcher.stop()
    while !thread.isFinished { usleep(1_000) }
  }

  /// The latencies of the scripted saves, in seconds.
  struct SaveLatencies {
    /// From each save to its op.
    var op: [Double] = []
    /// From each save to the event in the observer process.
    var observer: [Double] = []
    /// ``op`` by save pattern (``savePatterns``).
    var byPattern = [[Double]](repeating: [], count: savePatterns.count)
    /// The load average after the saves.
    var load = ""
  }

  /// How the saves are made, in turn.
  static let savePatterns = ["in place", "temp+rename", "vim", "sed -i"]

  static func measure(root: String, settings: Settings) throws {
    let arrivals = Arrivals()
    print("  load average at start: \(loadAverage())")
    let (watcher, thread) = try measureStartups(root: root, settings: settings, arrivals: arrivals)
    // The saves, planned up front so the observer process can watch each
    // document before it is saved.
    var generator = SystemRandomNumberGenerator()
    let plan = (0..<settings.saves).map { _ in Int.random(in: 0..<settings.docs, using: &generator) }
    let observer = try startObserver(root: root, pks: Set(plan.map { "d\($0)" }).sorted(), arrivals: arrivals)
    let latencies = try measureSaves(plan, root: root, arrivals: arrivals)
    let cpuBefore = cpuSeconds()
    let observerCPUBefore = cpuSeconds(ofProcess: observer.processIdentifier)
    let idleStart = now()
    Thread.sleep(forTimeInterval: settings.idleSeconds)
    let idleCPU = cpuSeconds() - cpuBefore
    let observerIdleCPU = cpuSeconds(ofProcess: observer.processIdentifier) - observerCPUBefore
    let idleWall = now() - idleStart
    stopWatcher(watcher, thread)
    // The observer exits when its stdin ends; its stdout then ends too.
    // (Not waitUntilExit: Foundation's Process may miss the exit here.)
    (observer.standardInput as? Pipe)?.fileHandleForWriting.closeFile()
    let exitWait = now()
    while !arrivals.observerDone.withLock({ $0 }) && now() - exitWait < 10 { usleep(1_000) }
    // Untimed: leaves the store clean, so `--work` can reuse it.
    _ = try Store(at: URL(fileURLWithPath: root)).commit(message: "bench saves")
    let catchUp = try measureCatchUp(root: root, settings: settings, arrivals: arrivals)
    guard !latencies.op.isEmpty else {
      print("  no saves (--saves 0)")
      return
    }
    printSaves(latencies, settings: settings, arrivals: arrivals)
    print(
      String(
        format:
          "  idle CPU over %.0f s: watcher %.3f s, %.3f%% of one core (target < 1%%); observer process %.3f s",
        idleWall, idleCPU, idleCPU / idleWall * 100, observerIdleCPU))
    if let catchUp { print(catchUp) }
  }

  /// Starts the watcher on the unchanged table a few times (the first may
  /// find colder caches than the rest), prints the times, and returns the
  /// last one, left running.
  static func measureStartups(root: String, settings: Settings, arrivals: Arrivals) throws -> (
    Watcher, Thread
  ) {
    var startups: [Double] = []
    for _ in 0..<settings.starts - 1 {
      let (watcher, thread, seconds) = try startWatcher(root: root, settings: settings, arrivals: arrivals)
      startups.append(seconds)
      stopWatcher(watcher, thread)
    }
    let (watcher, thread, seconds) = try startWatcher(root: root, settings: settings, arrivals: arrivals)
    startups.append(seconds)
    print(
      "  startup and catch-up, \(settings.docs) unchanged documents: "
        + startups.map { String(format: "%.2f s", $0) }.joined(separator: ", ") + " (target < 2 s; load "
        + loadAverage() + ")")
    return (watcher, thread)
  }

  /// Saves document `d<i>` for each `i` of `plan`, in turn by each of
  /// ``savePatterns``, and waits for its op and the observer's event.
  static func measureSaves(_ plan: [Int], root: String, arrivals: Arrivals) throws -> SaveLatencies {
    var latencies = SaveLatencies()
    for (n, i) in plan.enumerated() {
      let pk = "d\(i)"
      let file = "items/\(pk).json"
      let views = n + 1
      let text =
        "{\"id\": \"\(pk)\", \"tags\": [\"a\", \"s\(n)\"], \"title\": \"item \(i) save \(n)\", \"views\": \(views)}\n"
      arrivals.ops.withLock { $0[file] = nil }
      let saved = try save(text, to: root + "/" + file, root: root, pattern: n % savePatterns.count)
      var opTime: Double?
      var observedTime: Double?
      while true {
        opTime = opTime ?? arrivals.ops.withLock { $0[file] }
        observedTime =
          observedTime ?? arrivals.observed.withLock { $0[pk]?.first(where: { $0.views == views })?.time }
        if opTime != nil && observedTime != nil { break }
        if now() - saved > 10 { fatalError("save \(n) of \(file): no op or no observer event after 10 s") }
        _ = arrivals.arrived.wait(timeout: .now() + .milliseconds(100))
      }
      latencies.op.append(opTime! - saved)
      latencies.byPattern[n % savePatterns.count].append(opTime! - saved)
      // The observer may note the event before this thread reads the
      // clock after its last syscall: that is no latency at all.
      latencies.observer.append(max(0, observedTime! - saved))
    }
    latencies.load = loadAverage()
    return latencies
  }

  /// Saves `text` at `path` as save pattern `pattern` does, and returns the
  /// time the saved content was in place (latencies count from there).
  static func save(_ text: String, to path: String, root: String, pattern: Int) throws -> Double {
    switch pattern {
    case 0:
      try writeInPlace(path, text)
      return now()
    case 1:
      try writeInPlace(path + ".tmp", text)
      rename(path + ".tmp", path)
      return now()
    case 2:
      try writeInPlace(root + "/items/4913", "")
      unlink(root + "/items/4913")
      rename(path, path + "~")
      try writeInPlace(path, text)
      let saved = now()
      unlink(path + "~")
      return saved
    default:
      var template = Array((root + "/items/sedXXXXXX").utf8CString)
      let fd = mkstemp(&template)
      guard fd >= 0 else { fatalError("mkstemp failed") }
      let temp = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let bytes = Array(text.utf8)
      guard write(fd, bytes, bytes.count) == bytes.count else { fatalError("write failed") }
      fchmod(fd, 0o644)
      close(fd)
      rename(temp, path)
      return now()
    }
  }

  static func printSaves(_ latencies: SaveLatencies, settings: Settings, arrivals: Arrivals) {
    func ms(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
    let debounceMS =
      Double(settings.debounce.components.seconds) * 1000 + Double(settings.debounce.components.attoseconds)
      / 1e15
    print(
      String(format: "  save to op, %d saves (debounce %.0f ms): ", latencies.op.count, debounceMS)
        + "p50 \(ms(percentile(latencies.op, 0.5))), p99 \(ms(percentile(latencies.op, 0.99))), "
        + "max \(ms(latencies.op.max()!)) (target p99 < 100 ms; load \(latencies.load))")
    for (name, values) in zip(savePatterns, latencies.byPattern) where !values.isEmpty {
      print("    \(name): p50 \(ms(percentile(values, 0.5))), p99 \(ms(percentile(values, 0.99)))")
    }
    print(
      "  save to observeLocal event in another process: p50 \(ms(percentile(latencies.observer, 0.5))), "
        + "p99 \(ms(percentile(latencies.observer, 0.99))), max \(ms(latencies.observer.max()!))")
    let missing = arrivals.observedMissing.withLock { $0 }
    if missing > 0 {
      print("    (\(missing) events showed a document missing mid-save, before the saved one)")
    }
  }

  /// Stops nothing (no watcher runs), makes `settings.offline` changes to
  /// the table (edits, adds and deletes in equal parts), then times a start:
  /// its catch-up records every change before `ready`. Afterwards (untimed)
  /// it puts the table back as it was and commits, so `--work` can reuse it.
  /// - Returns: the line to report, or nil with `--offline 0`.
  static func measureCatchUp(root: String, settings: Settings, arrivals: Arrivals) throws -> String? {
    guard settings.offline > 0 else { return nil }
    let third = max(1, settings.offline / 3)
    var generator = SystemRandomNumberGenerator()
    let chosen = Array(
      (0..<settings.docs).shuffled(using: &generator).prefix(min(settings.docs, 2 * third)))
    let edited = chosen.prefix(third)
    let deleted = chosen.dropFirst(third)
    for i in edited {
      try writeInPlace(
        root + "/items/d\(i).json",
        "{\"id\": \"d\(i)\", \"tags\": [\"a\", \"offline\"], \"title\": \"item \(i) offline\", \"views\": 7}\n"
      )
    }
    for k in 0..<(settings.offline - 2 * third) {
      try writeInPlace(root + "/items/x\(k).json", "{\"id\": \"x\(k)\", \"title\": \"added offline\"}\n")
    }
    for i in deleted { unlink(root + "/items/d\(i).json") }
    let changes = edited.count + deleted.count + (settings.offline - 2 * third)
    arrivals.ops.withLock { $0 = [:] }
    let (watcher, thread, seconds) = try startWatcher(root: root, settings: settings, arrivals: arrivals)
    let recorded = arrivals.ops.withLock { $0.count }
    stopWatcher(watcher, thread)
    // Untimed: back to the original documents.
    for i in chosen {
      try writeInPlace(
        root + "/items/d\(i).json",
        "{\n  \"id\": \"d\(i)\",\n  \"tags\": [\n    \"a\"\n  ],\n  \"title\": \"item \(i)\",\n  \"views\": 0\n}\n"
      )
    }
    for k in 0..<(settings.offline - 2 * third) { unlink(root + "/items/x\(k).json") }
    _ = try Store(at: URL(fileURLWithPath: root)).commit(message: "bench catch-up undone")
    return String(
      format:
        "  startup with catch-up of %d offline changes (%d edits, %d adds, %d deletes) on %d documents: "
        + "%.2f s, %d ops recorded before ready",
      changes, edited.count, settings.offline - 2 * third, deleted.count, settings.docs, seconds, recorded)
      + " (load \(loadAverage()))"
  }

  /// Open, truncate, write, close: what `echo > file` and many editors do.
  static func writeInPlace(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { fatalError("open \(path): \(String(cString: strerror(errno)))") }
    let bytes = Array(text.utf8)
    guard write(fd, bytes, bytes.count) == bytes.count else { fatalError("write \(path) failed") }
    close(fd)
  }

  /// Starts the observer process and waits until it observes every pk.
  static func startObserver(root: String, pks: [String], arrivals: Arrivals) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = ["watch", "--observe", root]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data((pks.joined(separator: "\n") + "\n\n").utf8))
    let reader = Thread {
      var pending = Data()
      while true {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty {
          arrivals.observerDone.withLock { $0 = true }
          return
        }
        pending.append(chunk)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
          let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
          pending.removeSubrange(pending.startIndex...newline)
          let parts = line.split(separator: " ")
          if line == "ready" {
            arrivals.observerReady.withLock { $0 = true }
          } else if parts.count == 3, let time = Double(parts[2]) {
            if let views = Int(parts[1]) {
              arrivals.observed.withLock { $0[String(parts[0]), default: []].append((views, time)) }
              arrivals.arrived.signal()
            } else {
              arrivals.observedMissing.withLock { $0 += 1 }
            }
          }
        }
      }
    }
    reader.start()
    let start = now()
    while !arrivals.observerReady.withLock({ $0 }) {
      if now() - start > 120 { fatalError("the observer process did not start") }
      usleep(1_000)
    }
    print(
      String(format: "  observer process: observeLocal on %d documents in %.2f s", pks.count, now() - start))
    return process
  }

  /// Writes a line to stdout at once (unbuffered).
  static func emitLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var done = 0
    while done < bytes.count {
      let n = bytes[done...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
      if n <= 0 { return }
      done += n
    }
  }

  /// The observer process: reads pks from stdin up to an empty line, holds
  /// `observeLocal` on each, and prints `pk views time` for every event
  /// after the initial ones (`-` for a missing document), until stdin ends.
  static func observer(root: String) throws -> Never {
    let store = try Store(at: URL(fileURLWithPath: root))
    let items = store.collection("items")
    let out = Mutex(())
    var live: [LiveQuery] = []
    // Not the library's default, the main queue, which this program does not run.
    let delivery = DispatchQueue(label: "folio-bench.watch-observer")
    while let line = readLine(), !line.isEmpty {
      let pk = line
      live.append(
        try items.findByID(pk).observeLocal(deliverOn: delivery) { document, event in
          guard !event.isInitial else { return }
          let time = now()
          let views = document?["views"]?.intValue.map(String.init) ?? "-"
          out.withLock { _ in emitLine("\(pk) \(views) \(time)") }
        })
    }
    emitLine("ready")
    while readLine() != nil {}
    for query in live { query.stop() }
    exit(0)
  }
}
