internal import CSystem
import Foundation
import Glibc
import Synchronization

/// An on-demand ``IndexPublisher`` in a process of its own, like Gradle's
/// daemon or git's `fsmonitor--daemon`: `folio index-daemon` runs one, and
/// a fresh `folio query` or `folio export` that finds no publisher (and so
/// has to take a stat of every document file) starts one in the background,
/// so that the queries after it skip that check.
///
/// It is sound for the same reason a publisher is: a query trusts the index
/// only on an answer given after its question, from the process that holds
/// `publisher.lock` and has watched the folder since its own full check (see
/// ``IndexPublisher`` for the rule and the file systems it refuses to vouch
/// for). A daemon adds no trust of its own; at worst a query falls back to
/// the full check.
///
/// A daemon runs until one of these happens, and ``run()`` returns it:
/// - no query asked about a table for ``idle`` (default 30 minutes,
///   `index.idle` in `folio.yaml`);
/// - ``stop()`` (the CLI calls it on SIGINT and SIGTERM), or another process
///   asked it to stop (``Store/stopIndexDaemon(timeout:)``,
///   `folio index-daemon --stop`);
/// - the store went away: its `.git/folio` folder, its git folder or its
///   root was deleted or moved (seen by inotify, not by polling);
/// - `folio.yaml` changed: the next query starts a daemon with the new
///   tables;
/// - its own executable was replaced (an upgrade or a rebuild).
///
/// At most one publisher runs per store (`publisher.lock`), so a second
/// daemon fails to start with `LOCKED`.
///
/// ```swift
/// let daemon = try store.runIndexDaemon(idle: .seconds(600))
/// let reason = try daemon.run()    // blocks until idle, stopped or gone
/// ```
public final class IndexDaemon: Sendable {
  /// Why ``run()`` returned.
  public enum Exit: String, Sendable, Hashable {
    /// No question for the idle timeout.
    case idle
    /// ``stop()`` or a stop request from another process.
    case stopped
    /// The store's `.git/folio` folder, git folder or root was deleted or moved.
    case storeGone = "store gone"
    /// `folio.yaml` was written, replaced or removed.
    case configChanged = "config changed"
    /// This program's executable was replaced, removed or changed (an
    /// upgrade or a rebuild): the next query starts the new one, whose
    /// index version may differ.
    case executableReplaced = "executable replaced"
  }

  /// How long the daemon waits for a question before it exits.
  public let idle: Duration
  /// The process id that other processes see in ``IndexDaemonStatus``.
  public var pid: Int32 { getpid() }

  private let store: Store
  private let publisher: IndexPublisher
  /// Ends the event loop of ``run()``.
  private let wake: EventLoop.Handle

  init(store: Store, idle: Duration) throws {
    self.store = store
    self.idle = idle
    let wake = try EventLoop.Handle()
    self.wake = wake
    publisher = try IndexPublisher(store: store) { wake.stop() }
  }

  deinit {
    publisher.stop()
  }

  /// Makes ``run()`` return ``Exit/stopped``. Safe from any thread, and to
  /// call twice.
  public func stop() { wake.stop() }

  /// Answers questions until the daemon is idle, stopped, or its store is
  /// gone; then stops publishing.
  /// - Throws: `IO` when inotify cannot watch the store's folders.
  public func run() throws -> Exit {
    defer { publisher.stop() }
    let loop = EventLoop(handle: wake)
    var exit: Exit?
    // Unowned: the loop keeps the handlers that call this.
    let end = { [unowned loop] (reason: Exit) in
      exit = exit ?? reason
      loop.stop()
    }
    let gone = UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)
    let removed = UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
    let written = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)
    // A folder's own IN_DELETE_SELF waits until nothing pins it, and this
    // process's open `publisher.lock` pins `.git/folio`: so watch each
    // folder's parent for its removal, which is reported at once.
    let (gitParent, gitName) = FileSystem.split(store.gitDirectory)
    var masks: [String: UInt32] = [:]
    masks[store.privateDirectory, default: 0] |= gone
    masks[store.gitDirectory, default: 0] |= gone | removed
    masks[gitParent, default: 0] |= removed
    masks[store.rootPath, default: 0] |= gone | removed | written
    let store = self.store
    for (path, mask) in masks {
      let watch = try loop.watch(path, mask: mask | UInt32(IN_ONLYDIR)) { event in
        if event.has(gone) || event.has(IN_IGNORED) || event.has(IN_UNMOUNT) { return end(.storeGone) }
        if event.has(removed)
          && (path == store.gitDirectory && event.name == Store.privateFolderName
            || path == gitParent && event.name == gitName)
        {
          return end(.storeGone)
        }
        if path == store.rootPath && event.name == Config.fileName && event.has(removed | written) {
          end(.configChanged)
        }
      }
      if watch == nil { return .storeGone }
    }
    loop.onOverflow {
      if !FileSystem.isDirectory(store.privateDirectory) { end(.storeGone) }
    }
    // Replacing a binary unlinks the old one (its link count changes:
    // IN_ATTRIB) or writes over it; the old one's IN_DELETE_SELF would wait
    // for this process to exit.
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      _ = try? loop.watch(
        executable, mask: UInt32(IN_ATTRIB) | UInt32(IN_MODIFY) | UInt32(IN_MOVE_SELF) | UInt32(IN_DELETE_SELF)
      ) { _ in end(.executableReplaced) }
    }
    // Gone between opening the store and the watches: no event will come.
    if !FileSystem.isDirectory(store.privateDirectory) { return .storeGone }
    IndexDebug.log("daemon \(getpid()) publishing for \(store.rootPath) (idle \(idle))")

    let (idle, lastQuestion) = (self.idle, publisher.lastQuestion)
    loop.deadline = { Clock.monotonicSeconds() + (idle - (ContinuousClock.now - lastQuestion.value)).seconds }
    loop.afterWake = { if ContinuousClock.now - lastQuestion.value >= idle { end(.idle) } }
    try loop.run()
    return exit ?? .stopped
  }
}

extension IndexDaemon {
  /// `privateDirectory` → this process's own executable, for the stores
  /// whose queries start a daemon when they find no publisher.
  private static let onDemand = Mutex<[String: String]>([:])
  /// The stores this process already started a daemon for.
  private static let started = Mutex<Set<String>>([])

  /// A query that took the full check starts a daemon only for a table of
  /// at least this many documents, whose stat sweep costs tens of
  /// milliseconds or more (`FOLIO_INDEX_DAEMON_MIN_DOCUMENTS` overrides it;
  /// 0 starts one on every missed check).
  static var onDemandDocuments: Int {
    getenv("FOLIO_INDEX_DAEMON_MIN_DOCUMENTS").flatMap { Int(String(cString: $0)) } ?? 20_000
  }

  /// The mode the environment or the config asks for:
  /// `FOLIO_INDEX_DAEMON` (`auto`/`on` or `off`) when set, else `index.daemon`.
  static func mode(config: IndexConfig) -> IndexConfig.DaemonMode {
    if let value = getenv("FOLIO_INDEX_DAEMON") {
      switch String(cString: value).lowercased() {
      case "off", "0", "false", "no", "never": return .off
      case "auto", "on", "1", "true", "yes": return .auto
      default: break
      }
    }
    return config.daemon
  }

  static func enableOnDemand(store: Store, executable: String) {
    guard mode(config: store.config.index) == .auto else { return }
    onDemand.withLock { $0[store.privateDirectory] = executable }
  }

  /// The hook a query calls after a full check that found no publisher:
  /// starts a daemon once per store and process, if enabled.
  static func publisherMissed(store: Store) {
    guard let executable = onDemand.withLock({ $0[store.privateDirectory] }),
      started.withLock({ $0.insert(store.privateDirectory).inserted })
    else { return }
    if let pid = spawn(
      executable: executable, arguments: ["-C", store.rootPath, "index-daemon", "--on-demand"])
    {
      IndexDebug.log("started an index daemon (pid \(pid))")
    } else {
      IndexDebug.log("could not start an index daemon: \(String(cString: strerror(errno)))")
    }
  }

  /// Starts `executable` detached: in a session of its own (no controlling
  /// terminal, no signals from this one's Ctrl-C), with stdin, stdout and
  /// stderr on /dev/null, no other descriptor inherited, and `/` as its
  /// directory (it must not keep a folder busy). A thread reaps it, so it
  /// never lingers as a zombie of a long-lived process.
  /// - Returns: its pid, or nil when it could not be started (errno is set).
  static func spawn(executable: String, arguments: [String]) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    guard posix_spawn_file_actions_init(&actions) == 0 else { return nil }
    defer { posix_spawn_file_actions_destroy(&actions) }
    guard posix_spawnattr_init(&attributes) == 0 else { return nil }
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    posix_spawn_file_actions_addchdir_np(&actions, "/")
    // The caller may block or ignore signals (a test runner, a shell's `&`):
    // the daemon must still stop on SIGTERM.
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID, declared only under _GNU_SOURCE
    posix_spawnattr_setflags(&attributes, Int16(setsid | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    guard rc == 0 else {
      errno = rc
      return nil
    }
    let child = pid
    let reaper = Thread {
      var status: Int32 = 0
      _ = FileSystem.retrying { waitpid(child, &status, 0) }
    }
    reaper.name = "folio index daemon reaper"
    reaper.start()
    return pid
  }
}
