import FolioCore
import FolioSystem
import Glibc

extension Store {
  /// Lets this process's queries start an index daemon when they find no
  /// publisher and have to take a stat of every document file, so that the
  /// next fresh process answers its first page without that check.
  ///
  /// Nothing happens when `FOLIO_INDEX_DAEMON=off` is in the environment,
  /// or `index.daemon: off` in `folio.yaml` (the environment, when set,
  /// wins). At most one daemon is started per store and process, and a
  /// second daemon for the same store exits at once (`publisher.lock`).
  ///
  /// ```swift
  /// store.startIndexDaemonOnDemand(executable: "/usr/local/bin/folio")
  /// let page = try store.collection("flights").query().limitToFirst(20).get()
  /// ```
  /// - Parameter executable: the `folio` binary, run as
  ///   `folio -C ROOT index-daemon --on-demand`, detached.
  public func startIndexDaemonOnDemand(executable: String) {
    IndexPublisher.enableOnDemand(store: self, executable: executable)
  }

  /// Whether queries of this process start an index daemon on demand: the
  /// environment's `FOLIO_INDEX_DAEMON`, else `index.daemon` in `folio.yaml`.
  public var indexDaemonMode: IndexConfig.DaemonMode { IndexPublisher.daemonMode(config: config.index) }

  /// Starts vouching for this store's order indexes to other processes, so
  /// that their queries skip the stat of every document file (see
  /// ``IndexPublisher`` for the rule and its limits). Keep the returned
  /// handle for as long as the process runs (a long-lived process such as
  /// `folio watch`).
  ///
  /// ```swift
  /// let publisher = try store.publishIndexes()
  /// ```
  /// - Throws: `LOCKED` when another process already publishes for this
  ///   store; `IO` when the socket cannot be made.
  public func publishIndexes() throws -> IndexPublisher {
    try IndexPublisher(store: self, mode: .embedded)
  }

  /// Starts publishing this store's index state as a daemon
  /// (``IndexPublisher/Mode/daemon(idle:)``); call ``IndexPublisher/run()``
  /// to wait until it is idle, stopped or the store is gone.
  ///
  /// ```swift
  /// let daemon = try store.runIndexDaemon()
  /// print(try daemon.run())   // idle
  /// ```
  /// - Parameter idle: how long to wait for a question before exiting;
  ///   nil for `index.idle` in `folio.yaml` (default 30 minutes).
  /// - Throws: `LOCKED` when another process already publishes for this
  ///   store; `IO` when the socket or the watches cannot be made.
  public func runIndexDaemon(idle: Duration? = nil) throws -> IndexPublisher {
    try IndexPublisher(store: self, mode: .daemon(idle: idle ?? config.index.idle))
  }

  /// Whether a daemon or another publisher serves this store now. It reads
  /// `publisher.lock`: held means a live publisher, and its text names the
  /// pid and whether it is a daemon.
  public func indexDaemonStatus() -> IndexDaemonStatus {
    let path = privateDirectory + "/index/" + IndexPublisher.lockName
    guard let fd = try? FileSystem.openFile(path, O_RDONLY | O_CLOEXEC) else { return .none }
    defer { close(fd) }
    guard let free = try? FileSystem.lockFile(fd, LOCK_SH | LOCK_NB, path: path) else { return .none }
    if free {
      flock(fd, LOCK_UN)
      return .none
    }
    // Held: the holder writes its pid once its socket listens.
    for _ in 0..<100 {
      let text = (try? FileSystem.readAll(fd, path: path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
      _ = lseek(fd, 0, SEEK_SET)
      let words = text.split(whereSeparator: \.isWhitespace)
      if let first = words.first, let pid = Int32(first) {
        return words.count > 1 && words[1] == "daemon" ? .daemon(pid: pid) : .publisher(pid: pid)
      }
      usleep(10_000)
    }
    return .publisher(pid: 0)
  }

  /// Stops this store's index daemon and waits until it has exited: it
  /// sends `SIGTERM` to the pid that `publisher.lock` names (a daemon in
  /// this process is stopped without a signal).
  ///
  /// ```swift
  /// if let pid = try store.stopIndexDaemon() { print("stopped \(pid)") }
  /// ```
  /// - Returns: the daemon's pid, or nil when none ran.
  /// - Throws: `LOCKED` when the publisher is not a daemon (`folio watch`,
  ///   an app: stop that instead), or when the daemon does not exit within
  ///   `timeout`.
  @discardableResult
  public func stopIndexDaemon(timeout: Duration = .seconds(10)) throws -> Int32? {
    switch indexDaemonStatus() {
    case .none:
      return nil
    case .publisher(let pid):
      throw FolioError(
        .locked,
        "the index state is published by pid \(pid), which is not an index daemon; stop that process instead")
    case .daemon(let pid):
      // The lock is held, so its holder is alive and named itself a daemon:
      // it stops on SIGTERM (folio index-daemon takes it; an on-demand
      // daemon that has not yet is ended by it).
      if !IndexPublisher.stopInProcess(indexDirectory: privateDirectory + "/index") {
        kill(pid, SIGTERM)
      }
      let deadline = ContinuousClock.now + timeout
      while ContinuousClock.now < deadline {
        if indexDaemonStatus() == .none { return pid }
        usleep(10_000)
      }
      throw FolioError(.locked, "the index daemon (pid \(pid)) did not exit within \(timeout)")
    }
  }
}
