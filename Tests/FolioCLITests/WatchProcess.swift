import Folio
import FolioTestSupport
import Foundation
import Glibc

/// A running `folio watch`, with its output collected line by line so a
/// test can wait for each record.
final class WatchProcess: @unchecked Sendable {
  // @unchecked: `process` is only started and signalled from the test's
  // thread; the collected output is guarded by the `Mutexed` boxes.
  let process = Process()
  private let stdout = Mutexed<Data>(Data())
  private let stderr = Mutexed<Data>(Data())
  private let readers = DispatchGroup()

  /// Starts `folio watch ARGS` in `directory` and waits for it to be ready
  /// (`--json` is always passed).
  init(in directory: String, _ arguments: [String] = []) throws {
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    // An option is given once (issue 13): the test's own --debounce replaces the default.
    let debounce = arguments.contains("--debounce") ? [] : ["--debounce", "30ms"]
    process.arguments = ["watch", "--json"] + debounce + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    for (pipe, box) in [(out, stdout), (err, stderr)] {
      let handle = pipe.fileHandleForReading
      let group = readers
      group.enter()
      Thread {
        while true {
          let data = handle.availableData
          if data.isEmpty { break }
          box.set(box.value + data)
        }
        group.leave()
      }.start()
    }
    guard waitForLine(where: { $0["event"] as? String == "ready" }) != nil else {
      throw WatchProcessError.notReady(stderr: errorText)
    }
  }

  enum WatchProcessError: Error { case notReady(stderr: String) }

  /// Every stdout line so far, parsed.
  var records: [[String: Any]] {
    String(decoding: stdout.value, as: UTF8.self).split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }

  /// The op records so far.
  var ops: [[String: Any]] { records.filter { $0["event"] as? String == "op" } }
  /// The problem records so far.
  var problems: [[String: Any]] { records.filter { $0["event"] as? String == "problem" } }

  var outputText: String { String(decoding: stdout.value, as: UTF8.self) }
  var errorText: String { String(decoding: stderr.value, as: UTF8.self) }

  /// Waits until some line satisfies `predicate`; returns it.
  @discardableResult
  func waitForLine(
    timeout: Double = stateTimeout, where predicate: ([String: Any]) -> Bool
  ) -> [String: Any]? {
    eventually(timeout: timeout) { records.contains(where: predicate) || !process.isRunning }
    return records.first(where: predicate)
  }

  /// Waits until there are `count` records of `event` in total.
  @discardableResult
  func waitFor(_ count: Int, _ event: String, timeout: Double = stateTimeout) -> Bool {
    let counted = { self.records.filter({ $0["event"] as? String == event }).count >= count }
    eventually(timeout: timeout) { counted() || !process.isRunning }
    return counted()
  }

  /// The op records so far, less those of ``fence(in:)``'s markers.
  var opsWithoutFences: [[String: Any]] {
    ops.filter { !(($0["pk"] as? String)?.hasPrefix(Self.fencePrefix) ?? false) }
  }

  private static let fencePrefix = "fence-"
  private let fenceCount = Mutexed<Int>(0)
  /// How many fences have been recorded.
  var fences: Int { fenceCount.value }

  /// Saves a new marker document in `folder` (a table folder) and waits
  /// for its op's line. Every event of an earlier save is ahead of the
  /// marker's in the watcher's one inotify queue and starts its quiet
  /// period no later, and lines are written in order: once the marker's
  /// line is out, any line an earlier save would cause is out before it.
  /// - Returns: whether the line came in time.
  func fence(in folder: String, layout: TableLayout = .flat) -> Bool {
    let pk = Self.fencePrefix + "\(fenceCount.value + 1)"
    let name = (try? TableConfig(name: "t", layout: layout).documentName(for: pk)) ?? pk + ".json"
    var made = folder
    for name in layout.folder(of: pk).split(separator: "/") {
      made += "/" + name
      mkdir(made, 0o755)
    }
    Save.tempThenRename(folder + "/" + name, #"{"fence": true}"#)
    guard waitForLine(where: { $0["event"] as? String == "op" && $0["pk"] as? String == pk }) != nil else {
      return false
    }
    fenceCount.set(fenceCount.value + 1)
    return true
  }

  /// Sends `signal` and waits for the process to exit; returns its status.
  func stop(signal: Int32 = SIGINT) -> Int32 {
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    readers.wait()
    return process.terminationStatus
  }
}

/// Saves a file the ways editors do, with the syscalls they use.
enum Save {
  /// Open, truncate, write, close.
  static func inPlace(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    precondition(fd >= 0, "open \(path): \(errno)")
    let bytes = Array(text.utf8)
    precondition(write(fd, bytes, bytes.count) == bytes.count)
    close(fd)
  }

  /// A temp file beside it, renamed over it.
  static func tempThenRename(_ path: String, _ text: String) {
    inPlace(path + ".tmp", text)
    precondition(rename(path + ".tmp", path) == 0)
  }

  /// Runs `executable ARGS` in `directory` and returns its exit status.
  @discardableResult
  static func run(_ executable: String, _ arguments: [String], in directory: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    var environment = ProcessInfo.processInfo.environment
    environment["TERM"] = "dumb"
    environment["FOLIO_INDEX_DAEMON"] = "off"
    process.environment = environment
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }
}
