internal import CSystem
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Vouches for this store's order indexes to other processes, so that a
/// fresh process (a `folio query`) need not take a stat of every document
/// file before its first page.
///
/// A query made by a process that has watched the table folder since its
/// last full check re-reads only what inotify names. A fresh process has no
/// such history; without help it checks every file's stat data (about
/// 2.5 µs a file on this class of machine: 0.75 s for 300k documents).
/// A publisher is a long-lived process, such as `folio watch` or an app that
/// embeds Folio, that keeps those watches and answers, on
/// `.git/folio/index/publisher.sock`, the question "do the index files
/// describe the folder now?". On each question it drains its watch, re-reads
/// the documents that changed, appends what it found to the index log, and
/// answers with the base generation and the log length that describe the
/// folder. The asker then checks only what stat data alone cannot vouch for.
///
/// The rule a fresh process follows:
/// - it trusts the index only on a publisher's answer given after its
///   question, so a change made before the question is never missed (the
///   kernel queues an inotify event before the writer's `write`, `close` or
///   `rename` returns);
/// - the publisher must hold `publisher.lock` (`flock`); a dead publisher's
///   socket refuses connections, and its lock is free;
/// - anything else (no publisher, no answer within 2 s, another index
///   version, a folder other than the publisher's, an index log changed in
///   a way the publisher did not write) means the full stat check, which is
///   always correct.
///
/// Changes inotify does not report are never trusted this way: folders on
/// network or user-space file systems (NFS, SMB, FUSE) get no watch, so the
/// publisher refuses to vouch for them. Writes through `mmap` and through a
/// hard link outside the table folder raise no event either; stay with the
/// stat check (don't run a publisher) if something edits documents that way.
///
/// Besides `{"check": table, …}` a publisher answers `{"status": true}`
/// with its pid and whether it is an ``IndexDaemon``, and `{"stop": true}`,
/// which only a daemon obeys (`folio index-daemon --status`, `--stop`).
///
/// ```swift
/// let publisher = try store.publishIndexes()   // keep it while the app runs
/// // … other processes' queries now skip the stat sweep …
/// publisher.stop()                              // or let it go
/// ```
public final class IndexPublisher: Sendable {
  static let socketName = "publisher.sock"
  static let lockName = "publisher.lock"

  /// The index folders this process publishes; a query here must not ask
  /// its own publisher, which waits for the index cache the query holds.
  private static let publishing = Mutex<Set<String>>([])

  /// How many questions this process's publishers answered with a state to
  /// trust, by index folder (for tests).
  private static let cleanAnswers = Mutex<[String: Int]>([:])
  static func cleanAnswerCount(indexDirectory: String) -> Int {
    cleanAnswers.withLock { $0[indexDirectory] ?? 0 }
  }

  static func isPublishing(indexDirectory: String) -> Bool {
    publishing.withLock { $0.contains(indexDirectory) }
  }

  private let indexDirectory: String
  private let lockDescriptor: Int32
  private let listenDescriptor: Int32
  /// Ends the publisher's thread.
  private let loop: EventLoop.Handle
  private let stopped = Mutex(false)
  private let finished = DispatchSemaphore(value: 0)
  /// When this publisher last answered a question about a table (an
  /// ``IndexDaemon`` exits after a while without one).
  let lastQuestion = LastQuestion()

  /// When a publisher last answered about a table; shared with its thread.
  final class LastQuestion: Sendable {
    private let instant = Mutex(ContinuousClock.now)
    var value: ContinuousClock.Instant { instant.withLock { $0 } }
    func touch() { instant.withLock { $0 = .now } }
  }

  /// - Parameter onStopRequest: for an ``IndexDaemon``: called (on the
  ///   publisher's thread, so it must not call ``stop()``) when another
  ///   process asks it to stop (`folio index-daemon --stop`); nil for a
  ///   publisher that refuses to be stopped that way, such as `folio watch`.
  init(store: Store, onStopRequest: (@Sendable () -> Void)? = nil) throws {
    let directory = store.privateDirectory + "/index"
    indexDirectory = directory
    try FileSystem.makeDirectories(directory)
    let lockPath = directory + "/" + Self.lockName
    lockDescriptor = try FileSystem.openFile(lockPath, O_RDWR | O_CREAT | O_CLOEXEC)
    var cleanup: [Int32] = [lockDescriptor]
    var ok = false
    defer { if !ok { for fd in cleanup { close(fd) } } }
    if try !FileSystem.lockFile(lockDescriptor, LOCK_EX | LOCK_NB, path: lockPath) {
      let holder = (try? FileSystem.read(lockPath)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let words = holder.split(whereSeparator: \.isWhitespace)
        let who =
          words.isEmpty
          ? "" : " (pid \(words[0])\(words.count > 1 && words[1] == "daemon" ? ", an index daemon" : ""))"
      throw FolioError(
        .locked,
        "another process\(who) already publishes this store's index state; one publisher is enough",
        path: lockPath)
    }
    _ = ftruncate(lockDescriptor, 0)
    // "PID" or "PID daemon": what `folio index-daemon --status` reports.
    let holder = "\(getpid())" + (onStopRequest == nil ? "" : " daemon") + "\n"
    try? FileSystem.writeAll(lockDescriptor, Array(holder.utf8), path: lockPath)

    // A socket left by a publisher that died: we hold the lock, so it is
    // no one's.
    Self.unlinkSocket(directory)
    let socketPath = directory + "/" + Self.socketName
    listenDescriptor = try FileSystem.makeSocket(AF_UNIX, Int32(SOCK_STREAM.rawValue), path: socketPath)
    cleanup.append(listenDescriptor)
    let listen = listenDescriptor
    let bound = try IndexPublisherClient.withSocketAddress(indexDirectory: directory) { address, length in
      try FileSystem.bindSocket(listen, address, length, path: socketPath)
    }
    if bound == nil { throw FileSystem.error(ENOENT, "bind", path: socketPath) }
    try FileSystem.syscall("listen", path: directory) { Glibc.listen(listen, 16) }
    let lastQuestion = self.lastQuestion
    let done = finished
    Self.publishing.withLock { _ = $0.insert(directory) }
    defer { if !ok { Self.publishing.withLock { _ = $0.remove(directory) } } }
    loop = try EventLoop.startThread(named: "folio index publisher") { loop, started in
      defer { done.signal() }
      loop.onReadable(listen) {
        guard let client = try? FileSystem.acceptConnection(listen, path: directory) else { return }
        IndexPublisher.answer(client, store: store, lastQuestion: lastQuestion, onStopRequest: onStopRequest)
        close(client)
      }
      started()
      // One full check of each indexed table now, so the first question is
      // answered quickly.
      for table in store.config.tables where !table.order.isEmpty {
        _ = try? OrderIndexCache.publishableState(store: store, table: table)
      }
      try loop.run()
    }
    ok = true
  }

  deinit { stop() }

  /// Stops answering; other processes go back to the full stat check. Safe
  /// to call twice; also runs on deinit.
  public func stop() {
    let first = stopped.withLock { stopped in
      defer { stopped = true }
      return !stopped
    }
    guard first else { return }
    loop.stop()
    finished.wait()
    // The socket goes before the lock, so that a successor's socket is never
    // the one removed.
    Self.unlinkSocket(indexDirectory)
    close(listenDescriptor)
    Self.publishing.withLock { _ = $0.remove(indexDirectory) }
    close(lockDescriptor)
  }

  private static func unlinkSocket(_ directory: String) {
    let dirfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard dirfd >= 0 else { return }
    _ = unlinkat(dirfd, socketName, 0)
    close(dirfd)
  }

  /// Reads one question and answers it: `{"check": table, "signature": …}`
  /// about a table, or `{"status": true}` and `{"stop": true}` about the
  /// publisher itself (see ``IndexDaemon``).
  private static func answer(
    _ client: Int32, store: Store, lastQuestion: LastQuestion,
    onStopRequest: (@Sendable () -> Void)?
  ) {
    var timeout = timeval(tv_sec: 1, tv_usec: 0)
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard let line = IndexPublisherClient.receiveLine(client), let request = try? JSONValue(parsing: line)
    else { return }
    if request["status"] == .bool(true) || request["stop"] == .bool(true) {
      let stopping = request["stop"] == .bool(true) && onStopRequest != nil
      let reply: JSONValue = [
        "pid": .integer(Int64(getpid())), "daemon": .bool(onStopRequest != nil), "stopping": .bool(stopping),
      ]
      _ = IndexPublisherClient.send(client, reply.compactBytes() + [UInt8(ascii: "\n")])
      if stopping { onStopRequest?() }
      return
    }
    guard let name = request["check"]?.stringValue, let signature = request["signature"]?.stringValue
    else { return }
    lastQuestion.touch()
    var reply: JSONValue = ["clean": false]
    if let table = store.config.table(named: name),
      let state = try? OrderIndexCache.publishableState(store: store, table: table),
      state.signature == signature
    {
      reply =
        IndexPublisherClient.Reply(
          generation: state.generation, logSize: state.logSize, signature: state.signature,
          device: state.device,
          inode: state.inode
        ).json
      cleanAnswers.withLock { $0[store.privateDirectory + "/index", default: 0] += 1 }
    }
    _ = IndexPublisherClient.send(client, reply.compactBytes() + [UInt8(ascii: "\n")])
  }
}

extension Store {
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
    try IndexPublisher(store: self)
  }
}
