import Foundation
import Glibc

public struct GitDaemonError: Error, CustomStringConvertible {
  public let port: Int
  public var description: String { "git daemon did not start on port \(port)" }
}

/// A `git daemon` serving `base` on 127.0.0.1, with push enabled; stopped on
/// `stop()`.
public final class GitDaemon {
  public let process: Process
  public let port: Int

  /// Starts the daemon on `port`, or on a random free one, with
  /// `environment` added to this process's for it and the git commands it
  /// runs.
  ///
  /// A random port comes from below the kernel's ephemeral range (see
  /// ``LoopbackPort/random()``). A daemon that exits instead of listening
  /// (its port taken) is retried, on a new port, or on the same one after
  /// a pause.
  public init(base: String, port: Int? = nil, environment: [String: String] = [:]) throws {
    var candidate = port ?? LoopbackPort.random()
    for attempt in 0..<25 {
      if let running = try Self.launch(base: base, port: candidate, environment: environment) {
        process = running
        self.port = candidate
        return
      }
      if port == nil {
        candidate = LoopbackPort.random()
      } else {
        pause(seconds: 0.1 * Double(min(attempt + 1, 5)))
      }
    }
    throw GitDaemonError(port: candidate)
  }

  /// A daemon accepting connections on `port`, or nil if it exited first or
  /// never accepted.
  private static func launch(base: String, port: Int, environment: [String: String]) throws -> Process? {
    let process = Process()
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    // The daemon itself, not the `git` wrapper, so stopping it stops it.
    process.executableURL = URL(fileURLWithPath: "/usr/lib/git-core/git-daemon")
    process.arguments = [
      "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1",
      "--port=\(port)", "--base-path=\(base)", base,
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    eventually { !process.isRunning || canConnect(port: port) }
    if process.isRunning && canConnect(port: port) { return process }
    process.terminate()
    process.waitUntilExit()
    return nil
  }

  public func url(_ repository: String) -> String { "git://127.0.0.1:\(port)/\(repository)" }

  public func stop() {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    eventually(timeout: 5) { !Self.canConnect(port: port) && !process.isRunning }
  }

  /// Kills the daemon and every process it started (the `receive-pack` or
  /// `upload-pack` serving a connection, and their hooks), so connections in
  /// progress break off, as when a server goes away.
  public func crash() {
    guard process.isRunning else { return }
    let pids = Self.descendants(of: process.processIdentifier)
    kill(process.processIdentifier, SIGKILL)
    for pid in pids { kill(pid, SIGKILL) }
    stop()
  }

  /// The processes below `root`, from `/proc`.
  public static func descendants(of root: pid_t) -> [pid_t] {
    var parents: [pid_t: pid_t] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
      guard let pid = pid_t(name),
        let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { continue }
      // After "pid (comm) ": state, then the parent's pid.
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      if fields.count > 1, let parent = pid_t(fields[1]) { parents[pid] = parent }
    }
    var found: [pid_t] = []
    var frontier = [root]
    while let next = frontier.popLast() {
      let children = parents.filter { $0.value == next }.map(\.key)
      found += children
      frontier += children
    }
    return found
  }

  deinit { stop() }

  public static func canConnect(port: Int) -> Bool { LoopbackPort.canConnect(port: port) }
}
