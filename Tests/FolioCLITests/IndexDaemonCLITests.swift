import FolioTestSupport
import Foundation
import Testing

/// `folio index-daemon` and the daemon that queries start on demand. Each
/// test stops its daemon, and removing the scratch store would end it too.
struct IndexDaemonCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
        order: [rank]
    """

  /// With the daemon on, for any store size, and FOLIO_DEBUG_INDEX=1 so
  /// that each index check says how it was made.
  static let on = [
    "FOLIO_INDEX_DAEMON": "auto", "FOLIO_DEBUG_INDEX": "1", "FOLIO_INDEX_DAEMON_MIN_DOCUMENTS": "0",
  ]

  func makeStore(yaml: String = Self.yaml) throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: yaml)
    #expect(try scratch.folio("init").status == 0)
    for (pk, rank) in [("a", 3), ("b", 1), ("c", 2)] {
      #expect(try scratch.folio("put", "todos", pk, "-", input: #"{"rank": \#(rank)}"#).status == 0)
    }
    return scratch
  }

  func query(_ scratch: CLIScratch, _ arguments: String...) throws -> FolioRunner.Result {
    try FolioRunner.run(["query", "todos"] + arguments, in: scratch.path, environment: Self.on)
  }

  func status(_ scratch: CLIScratch) throws -> String {
    try scratch.folio("index-daemon", "--status").stdout
  }

  /// The running processes whose arguments name `scratch`'s folder, as
  /// those of a daemon a query started do (`-C ROOT index-daemon`).
  func processes(naming scratch: CLIScratch) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { name in
      guard Int32(name) != nil,
        let bytes = FileManager.default.contents(atPath: "/proc/\(name)/cmdline")
      else { return false }
      return bytes.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == scratch.path }
    }
  }

  func pks(_ stdout: String) -> [String] {
    stdout.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
    }
  }

  @Test func aQueryStartsADaemonThatAnswersTheNextOne() throws {
    let scratch = try makeStore()
    defer {
      _ = try? scratch.folio("index-daemon", "--stop")
      scratch.remove()
    }
    #expect(try status(scratch) == "no index daemon\n")
    let first = try query(scratch)
    #expect(first.status == 0)
    #expect(pks(first.stdout) == ["b", "c", "a"])
    #expect(first.stderr.contains("full stat check (no publisher)"), "\(first.stderr)")
    #expect(first.stderr.contains("started an index daemon"), "\(first.stderr)")
    #expect(try eventually { try status(scratch).hasPrefix("index daemon running (pid ") })
    #expect(processes(naming: scratch).count == 1, "the daemon is found by its arguments")

    // A second fresh process is answered by the daemon: no stat sweep.
    let second = try query(scratch, "--limit-to-first", "2")
    #expect(pks(second.stdout) == ["b", "c"])
    #expect(second.stderr.contains("trusted the publisher's answer"), "\(second.stderr)")
    #expect(!second.stderr.contains("started"), "\(second.stderr)")

    // Edits behind Folio's back while the daemon runs show up at once.
    try scratch.write("data/todos/a.json", #"{"id": "a", "rank": 0}"#)
    try scratch.write("data/todos/d.json", #"{"id": "d", "rank": 1.5}"#)
    try FileManager.default.removeItem(atPath: scratch.path + "/data/todos/c.json")
    let edited = try query(scratch)
    #expect(pks(edited.stdout) == ["a", "b", "d"], "\(edited.stdout)")
    #expect(edited.stderr.contains("trusted the publisher's answer"), "\(edited.stderr)")
    let exported = try FolioRunner.run(["export", "todos"], in: scratch.path, environment: Self.on)
    #expect(pks(exported.stdout) == ["a", "b", "d"])

    let stop = try scratch.folio("index-daemon", "--stop")
    #expect(stop.status == 0 && stop.stdout.hasPrefix("stopped the index daemon (pid "), "\(stop.stdout)")
    #expect(try status(scratch) == "no index daemon\n")
    #expect(try scratch.folio("index-daemon", "--stop").stdout == "no index daemon\n")
    // Without a daemon the query is still right, and starts a new one.
    let after = try query(scratch)
    #expect(pks(after.stdout) == ["a", "b", "d"])
    #expect(after.stderr.contains("started an index daemon"), "\(after.stderr)")
  }

  /// A small store's full check is cheaper than a process: a query there
  /// leaves nothing behind.
  @Test func aQueryOnASmallStoreLeavesNoProcessBehind() throws {
    let scratch = try makeStore()
    defer {
      _ = try? scratch.folio("index-daemon", "--stop")
      scratch.remove()
    }
    let first = try FolioRunner.run(
      ["query", "todos"], in: scratch.path,
      environment: ["FOLIO_INDEX_DAEMON": "auto", "FOLIO_DEBUG_INDEX": "1"])
    #expect(first.status == 0)
    #expect(first.stderr.contains("full stat check (no publisher)"), "\(first.stderr)")
    #expect(!first.stderr.contains("started an index daemon"), "\(first.stderr)")
    // A query starts a daemon before it exits (posix_spawn returns once
    // the daemon runs): none runs now, so none was started.
    #expect(processes(naming: scratch) == [])
    #expect(try status(scratch) == "no index daemon\n")
  }

  /// A folder the full check lists counts as four documents: with the bar
  /// at 1,000, 210 documents in a nested table (210 folders or more) start
  /// a daemon, and the same 210 in a flat one do not.
  @Test(arguments: [("flat", false), ("nested", true)])
  func theFoldersANestedTableIsListedInCountTowardsADaemon(layout: String, starts: Bool) throws {
    let scratch = try CLIScratch(yaml: nil)
    defer {
      _ = try? scratch.folio("index-daemon", "--stop")
      scratch.remove()
    }
    #expect(try scratch.folio("init").status == 0)
    let rows = (0..<210).map { #"{"id": "d\#($0)", "rank": \#($0)}"# }.joined(separator: "\n")
    try scratch.write("rows.ndjson", rows + "\n")
    let imported = try scratch.folio("import", "todos", "rows.ndjson", "--create", "--layout", layout)
    #expect(imported.status == 0, "\(imported.stderr)")
    let first = try FolioRunner.run(
      ["query", "todos"], in: scratch.path,
      environment: [
        "FOLIO_INDEX_DAEMON": "auto", "FOLIO_DEBUG_INDEX": "1", "FOLIO_INDEX_DAEMON_MIN_DOCUMENTS": "1000",
      ])
    #expect(first.status == 0)
    #expect(first.stderr.contains("full stat check (no publisher)"), "\(first.stderr)")
    #expect(first.stderr.contains("started an index daemon") == starts, "\(first.stderr)")
  }

  @Test func theEnvironmentOrTheConfigTurnsItOff() throws {
    let scratch = try makeStore()
    defer {
      _ = try? scratch.folio("index-daemon", "--stop")
      scratch.remove()
    }
    let off = try FolioRunner.run(
      ["query", "todos"], in: scratch.path,
      environment: ["FOLIO_INDEX_DAEMON": "off", "FOLIO_DEBUG_INDEX": "1"])
    #expect(pks(off.stdout) == ["b", "c", "a"])
    #expect(off.stderr.contains("full stat check (no publisher)") && !off.stderr.contains("started"))

    let configured = try makeStore(yaml: Self.yaml + "\nindex:\n  daemon: off\n  idle: 5m\n")
    defer {
      _ = try? configured.folio("index-daemon", "--stop")
      configured.remove()
    }
    let result = try FolioRunner.run(
      ["query", "todos"], in: configured.path, environment: ["FOLIO_DEBUG_INDEX": "1"])
    #expect(pks(result.stdout) == ["b", "c", "a"])
    #expect(!result.stderr.contains("started"), "\(result.stderr)")
    // A query starts a daemon before it exits (posix_spawn returns once
    // the daemon runs): none runs now, so none was started.
    #expect(processes(naming: scratch) == [] && processes(naming: configured) == [])
    #expect(try status(scratch) == "no index daemon\n")
    #expect(try status(configured) == "no index daemon\n")
  }

  @Test func exitsWhenIdle() throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    let started = Date()
    let result = try scratch.folio("index-daemon", "--idle", "1s")
    let elapsed = Date().timeIntervalSince(started)
    #expect(result.status == 0)
    #expect(result.stderr.contains("index daemon stopped: idle"), "\(result.stderr)")
    #expect(elapsed >= 1 && elapsed < 10)
    #expect(try status(scratch) == "no index daemon\n")
  }

  /// Starts `folio index-daemon` in the background and waits until it runs.
  func startDaemon(_ scratch: CLIScratch, _ arguments: [String] = []) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    process.arguments = ["-C", scratch.path, "index-daemon"] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    #expect(try eventually { try status(scratch).hasPrefix("index daemon running") })
    return process
  }

  /// Waits for `process` to exit, killing it after `seconds`; true if it
  /// exited on its own.
  func exits(_ process: Process, within seconds: Double = stateTimeout) -> Bool {
    if eventually(timeout: seconds, { !process.isRunning }) { return true }
    process.terminate()
    process.waitUntilExit()
    return false
  }

  @Test func exitsWhenTheStoreGoes() throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    let daemon = try startDaemon(scratch)
    // The daemon may be writing in the folder as it goes: remove until it
    // is gone.
    let folder = scratch.path + "/.git/folio"
    #expect(
      eventually {
        (try? FileManager.default.removeItem(atPath: folder)) != nil
          || !FileManager.default.fileExists(atPath: folder)
      })
    #expect(exits(daemon))

    // The whole store, moved away, then deleted.
    let other = try makeStore()
    defer { other.remove() }
    let second = try startDaemon(other)
    #expect(
      eventually {
        (try? FileManager.default.removeItem(atPath: other.path)) != nil
          || !FileManager.default.fileExists(atPath: other.path)
      })
    #expect(exits(second))
  }

  @Test func stopsOnSIGTERMAndOnAChangedConfig() throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    let daemon = try startDaemon(scratch)
    // One publisher per store.
    let again = try scratch.folio("index-daemon")
    #expect(again.status == 1 && again.stderr.contains("an index daemon"), "\(again.stderr)")
    daemon.terminate()
    #expect(exits(daemon))
    #expect(try status(scratch) == "no index daemon\n")

    let next = try startDaemon(scratch)
    try scratch.write("folio.yaml", Self.yaml + "\n      # a comment\n")
    #expect(exits(next))
  }

  @Test func usage() throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    let help = try scratch.folio("index-daemon", "--help")
    #expect(
      help.status == 0 && help.stdout.contains("--idle DURATION")
        && help.stdout.contains("FOLIO_INDEX_DAEMON"))
    #expect(try scratch.folio("index-daemon", "--stop", "--status").status == 64)
    let bad = try scratch.folio("index-daemon", "--idle", "soon")
    #expect(bad.status == 64 && bad.stderr.contains("invalid duration 'soon'"), "\(bad.stderr)")
    #expect(try scratch.folio("index-daemon", "--status", "--idle", "1s").status == 64)
  }
}
