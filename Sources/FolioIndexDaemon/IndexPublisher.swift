import Dispatch
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc
import Synchronization

/// Vouches for this store's order indexes to other processes, so that a
/// fresh process (a `folio query`) need not take a stat of every document
/// file before its first page. It runs in one of two modes: alongside the
/// program that made it (`folio watch`, an app), or as the index daemon.
///
/// A query made by a process that has watched the table folder since its
/// last full check re-reads only what inotify names. A fresh process has no
/// such history; without help it checks every file's stat data (about
/// 2.5 µs a file on this class of machine: 0.75 s for 300k documents).
/// A publisher is a long-lived process that keeps those watches and
/// answers, on `.git/folio/index/publisher.sock`, the question "do the index
/// files describe the folder now?". On each question it drains its watch,
/// re-reads the documents that changed, appends what it found to the index
/// log, and answers with the base generation and the log length that
/// describe the folder. The asker then checks only what stat data alone
/// cannot vouch for.
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
/// `publisher.lock` holds the publisher's pid, and `daemon` after it in
/// daemon mode: `folio index-daemon --status` reads it, and `--stop` sends
/// that pid `SIGTERM` (see ``Store/stopIndexDaemon(timeout:)``).
///
/// ```swift
/// let publisher = try store.publishIndexes()   // keep it while the app runs
/// // … other processes' queries now skip the stat sweep …
/// publisher.stop()                              // or let it go
/// ```
public final class IndexPublisher: Sendable {
  /// How long a publisher runs.
  public enum Mode: Sendable, Hashable {
    /// For as long as the program that made it keeps it and does not call
    /// ``IndexPublisher/stop()``: `folio watch`, an app
    /// (``Store/publishIndexes()``). Refuses `folio index-daemon --stop`.
    case embedded
    /// The index daemon, like Gradle's daemon or git's
    /// `fsmonitor--daemon`: `folio index-daemon` runs one, and a query on a
    /// large store that finds no publisher starts one in the background
    /// (``Store/startIndexDaemonOnDemand(executable:)``). Besides ``stop()``
    /// it ends after `idle` without a question, when the store goes away,
    /// when `folio.yaml` changes or when its executable is replaced; see
    /// ``Exit``.
    case daemon(idle: Duration)
  }

  /// Why a publisher stopped, as ``run()`` returns it.
  public enum Exit: String, Sendable, Hashable {
    /// No question for the idle timeout.
    case idle
    /// ``stop()``, or `SIGTERM` in the `folio index-daemon` process.
    case stopped
    /// The store's `.git/folio` folder, git folder or root was deleted or moved.
    case storeGone = "store gone"
    /// `folio.yaml` was written, replaced or removed: the next query starts
    /// a daemon with the new tables.
    case configChanged = "config changed"
    /// This program's executable was replaced, removed or changed (an
    /// upgrade or a rebuild): the next query starts the new one, whose
    /// index version may differ.
    case executableReplaced = "executable replaced"
  }

  static let socketName = "publisher.sock"
  static let lockName = "publisher.lock"

  /// The index folders this process publishes, and how to stop each: a
  /// query here must not ask its own publisher (it waits for the index
  /// cache the query holds), and a daemon here is stopped without a signal.
  private static let publishing = Mutex<[String: EventLoop.Handle]>([:])

  /// How many questions this process's publishers answered with a state to
  /// trust, by index folder.
  private static let cleanAnswers = Mutex<[String: Int]>([:])

  /// How many questions this process's publishers for `indexDirectory`
  /// answered with a state to trust (tests check that a query asked).
  @_spi(Testing) public static func cleanAnswerCount(indexDirectory: String) -> Int {
    cleanAnswers.withLock { $0[indexDirectory] ?? 0 }
  }

  static func isPublishing(indexDirectory: String) -> Bool {
    publishing.withLock { $0[indexDirectory] != nil }
  }

  /// Stops this process's publisher for `indexDirectory`, if it runs here.
  /// - Returns: false when none runs in this process.
  static func stopInProcess(indexDirectory: String) -> Bool {
    guard let handle = publishing.withLock({ $0[indexDirectory] }) else { return false }
    handle.stop()
    return true
  }

  /// Its mode.
  public let mode: Mode
  /// How long a daemon waits for a question before it exits; nil for an
  /// embedded publisher.
  public var idle: Duration? {
    if case .daemon(let idle) = mode { return idle }
    return nil
  }
  /// The process id that other processes see in ``IndexDaemonStatus``.
  public var pid: Int32 { getpid() }

  /// Ends the publisher's thread.
  private let loop: EventLoop.Handle
  /// Signalled once the thread has let go of the socket and the lock.
  private let finished = DispatchSemaphore(value: 0)
  private let shared = Shared()

  /// What the publisher's thread and its callers share.
  private final class Shared: Sendable {
    /// When a question about a table was last answered (or the publisher
    /// started): a daemon exits after `idle` without one.
    let lastQuestion = Mutex(ContinuousClock.now)
    /// Why the thread ended; nil while it runs.
    let exit = Mutex<Exit?>(nil)
    /// What ended the thread, if something failed.
    let failure = Mutex<FolioError?>(nil)
  }

  /// Takes the publisher lock on `lock`. When the holder on record is this
  /// process and none of its publishers is running for `directory`, the
  /// one that stopped has closed the lock, but a child another thread was
  /// starting at that moment may still hold a copy of the descriptor until
  /// it runs its program (`flock` belongs to the open file, not the
  /// process): the lock is tried again until that copy is gone.
  private static func lockAfterOwnStoppedPublisher(_ lock: Int32, path: String, directory: String) throws
    -> Bool
  {
    if try FileSystem.lockFile(lock, LOCK_EX | LOCK_NB, path: path) { return true }
    let holder = (try? FileSystem.read(path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    guard holder.split(whereSeparator: \.isWhitespace).first == "\(getpid())",
      !publishing.withLock({ $0[directory] != nil })
    else { return false }
    for _ in 0..<500 {
      usleep(10_000)
      if try FileSystem.lockFile(lock, LOCK_EX | LOCK_NB, path: path) { return true }
    }
    return false
  }

  /// The error for a lock another process holds, naming it from what it
  /// wrote in the lock file ("PID" or "PID daemon").
  private static func lockedError(lockPath: String) -> FolioError {
    let holder = (try? FileSystem.read(lockPath)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    let words = holder.split(whereSeparator: \.isWhitespace)
    let who =
      words.isEmpty
      ? "" : " (pid \(words[0])\(words.count > 1 && words[1] == "daemon" ? ", an index daemon" : ""))"
    return FolioError(
      .locked, "another process\(who) already publishes this store's index state; one publisher is enough",
      path: lockPath)
  }

  /// The publisher's socket in `directory`, bound and listening, and its
  /// path. A socket left by a publisher that died goes first: the caller
  /// holds the lock, so it is no one's.
  private static func listeningSocket(directory: String) throws -> (Int32, String) {
    unlinkSocket(directory)
    let socketPath = directory + "/" + socketName
    let listen = try FileSystem.makeSocket(AF_UNIX, Int32(SOCK_STREAM.rawValue), path: socketPath)
    do {
      let bound: Void? = try IndexPublisherClient.withSocketAddress(indexDirectory: directory) {
        address, length in
        try FileSystem.bindSocket(listen, address, length, path: socketPath)
      }
      if bound == nil { throw FileSystem.error(ENOENT, "bind", path: socketPath) }
      try FileSystem.syscall("listen", path: socketPath) { Glibc.listen(listen, 16) }
    } catch {
      close(listen)
      throw error
    }
    return (listen, socketPath)
  }

  /// - Throws: `LOCKED` when another process already publishes for this
  ///   store; `IO` when the lock, the socket or (for a daemon) the watches
  ///   cannot be made.
  init(store: Store, mode: Mode) throws {
    self.mode = mode
    let directory = store.privateDirectory + "/index"
    try FileSystem.makeDirectories(directory)
    let lockPath = directory + "/" + Self.lockName
    let lock = try FileSystem.openFile(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW)
    var descriptors: [Int32] = [lock]
    var started = false
    defer { if !started { for fd in descriptors { close(fd) } } }
    if try !Self.lockAfterOwnStoppedPublisher(lock, path: lockPath, directory: directory) {
      throw Self.lockedError(lockPath: lockPath)
    }
    // A dead holder's pid goes at once; this one's is written once the
    // socket listens, so that a publisher the status names answers.
    _ = ftruncate(lock, 0)
    let (listen, socketPath) = try Self.listeningSocket(directory: directory)
    descriptors.append(listen)
    // "PID" or "PID daemon": what `folio index-daemon --status` reports,
    // and where `--stop` sends its signal.
    let holder = "\(getpid())" + (mode == .embedded ? "" : " daemon") + "\n"
    try? FileSystem.writeAll(lock, Array(holder.utf8), path: lockPath)

    let (shared, finished) = (self.shared, self.finished)
    loop = try EventLoop.startThread(named: "folio index publisher") { loop, started in
      // Without an inotify instance, status and commit check every file.
      let journal = try? ChangeJournal(store: store)
      if let journal { loop.onReadable(journal.descriptor) { journal.drain() } }
      loop.onReadable(listen) {
        guard let client = try? FileSystem.acceptConnection(listen, path: socketPath) else { return }
        Self.answer(client, store: store, journal: journal, shared: shared)
        close(client)
      }
      // Unowned: the loop keeps the handlers that call this.
      let end = { [unowned loop] (reason: Exit) in
        shared.exit.withLock { $0 = $0 ?? reason }
        loop.stop()
      }
      var watching = true
      if case .daemon(let idle) = mode {
        watching = try Self.watchForExit(store: store, loop: loop, end: end)
        let sinceQuestion = { ContinuousClock.now - shared.lastQuestion.withLock { $0 } }
        loop.deadline = { SystemClock.monotonicSeconds() + (idle - sinceQuestion()).seconds }
        loop.afterWake = { if sinceQuestion() >= idle { end(.idle) } }
      }
      Self.publishing.withLock { $0[directory] = loop.handle }
      started()
      // From here the thread owns the socket and the lock. The socket goes
      // before the lock, so that a successor's socket is never the one
      // removed; then `run()` and `stop()` may return.
      defer {
        Self.unlinkSocket(directory)
        close(listen)
        Self.publishing.withLock { _ = $0.removeValue(forKey: directory) }
        close(lock)
        finished.signal()
      }
      // Gone between opening the store and the watches: no event will come.
      guard watching else { return end(.storeGone) }
      if case .daemon(let idle) = mode {
        IndexDebug.log("daemon \(getpid()) publishing for \(store.rootPath) (idle \(idle))")
      }
      // One full check of each indexed table now, so the first question is
      // answered quickly.
      for table in store.config.tables where !table.indexedPaths.isEmpty {
        _ = try? OrderIndexCache.publishableState(store: store, table: table)
      }
      do {
        try loop.run()
      } catch {
        shared.failure.withLock { $0 = error as? FolioError ?? FolioError(.io, "\(error)") }
      }
    }
    started = true
  }

  deinit { stop() }

  /// Stops answering and waits until the socket and the lock are let go;
  /// other processes go back to the full stat check. Safe from any thread,
  /// twice, and on deinit.
  public func stop() {
    loop.stop()
    waitUntilFinished()
  }

  /// Answers questions until the publisher stops (a daemon stops by
  /// itself; see ``Mode/daemon(idle:)``), then lets go of the socket and
  /// the lock.
  ///
  /// ```swift
  /// let daemon = try store.runIndexDaemon(idle: .seconds(600))
  /// let reason = try daemon.run()    // blocks until idle, stopped or gone
  /// ```
  /// - Returns: why it stopped.
  /// - Throws: `IO` when its event queue failed.
  @discardableResult
  public func run() throws -> Exit {
    let exit = waitUntilFinished()
    if let failure = shared.failure.withLock({ $0 }) { throw failure }
    return exit
  }

  @discardableResult
  private func waitUntilFinished() -> Exit {
    finished.wait()
    // For the next caller: `run()` and `stop()` may both wait.
    finished.signal()
    return shared.exit.withLock { $0 } ?? .stopped
  }

  private static func unlinkSocket(_ directory: String) {
    guard let dirfd = try? FileSystem.openFile(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) else { return }
    _ = unlinkat(dirfd, socketName, 0)
    close(dirfd)
  }

  /// Reads one question and answers it: `{"check": table, "signature": …}`
  /// with the state to trust, or `{"clean": false}`; `{"changes": token}`
  /// (or null) with the journal's ``ChangedFiles``.
  private static func answer(_ client: Int32, store: Store, journal: ChangeJournal?, shared: Shared) {
    var timeout = timeval(tv_sec: 1, tv_usec: 0)
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard let line = IndexPublisherClient.receiveLine(client), let request = try? JSONValue(parsing: line)
    else {
      return
    }
    if let since = request["changes"], let journal {
      shared.lastQuestion.withLock { $0 = .now }
      let answer = journal.changes(since: since.stringValue)
      _ = IndexPublisherClient.send(client, answer.json.compactBytes() + [UInt8(ascii: "\n")])
      return
    }
    guard let name = request["check"]?.stringValue, let signature = request["signature"]?.stringValue else {
      return
    }
    shared.lastQuestion.withLock { $0 = .now }
    var reply: JSONValue = ["clean": false]
    if let table = store.config.table(named: name),
      let state = try? OrderIndexCache.publishableState(store: store, table: table),
      state.signature == signature
    {
      reply =
        PublisherAnswer(
          generation: state.generation, logSize: state.logSize, signature: state.signature,
          device: state.device, inode: state.inode
        ).json
      cleanAnswers.withLock { $0[store.privateDirectory + "/index", default: 0] += 1 }
    }
    _ = IndexPublisherClient.send(client, reply.compactBytes() + [UInt8(ascii: "\n")])
  }
}
