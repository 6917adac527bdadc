import FolioCore
import FolioSystem
import Glibc
import Synchronization

/// Turns saves from any text editor into mutations: it watches every table
/// folder with inotify, diffs each saved document against the state Folio
/// last wrote or recorded, and logs the difference as an op, with counters
/// as increments and sets as unions and removes.
///
/// ```swift
/// let watcher = try Watcher(store: store) { event in
///     if case .recorded(let op, let file) = event { print(file, op.mutation.kind) }
/// }
/// Thread { try? watcher.run() }.start()
/// // ... later, from any thread:
/// watcher.stop()
/// ```
///
/// On start it records every change made while nothing watched, then emits
/// ``WatchEvent/ready(tables:)``. Folio's own writes (API mutations, sync,
/// `fmt`) are not echoed: a file whose bytes hash equal to what Folio last
/// wrote or recorded is dropped unparsed, and one equal in value to it is
/// not an edit either. Events are delivered on the thread that calls ``run()``,
/// one at a time, in order.
public final class Watcher: Sendable {
  /// The store being watched.
  public let store: Store
  /// The options it was started with.
  public let options: Options
  /// How changed files were settled, for tests and benchmarks.
  let counters = WatchCounters()
  private let handler: @Sendable (WatchEvent) -> Void
  /// Ends the event loop of ``run()``.
  private let wake: EventLoop.Handle
  private let state = Mutex(RunState())

  private struct RunState {
    var started = false
    var stopRequested = false
  }

  /// Creates a watcher; nothing happens until ``run()``.
  /// - Parameter handler: called for every ``WatchEvent``, on the thread
  ///   that runs the watcher.
  public init(store: Store, options: Options = Options(), handler: @escaping @Sendable (WatchEvent) -> Void)
    throws
  {
    self.store = store
    self.options = options
    self.handler = handler
    self.wake = try EventLoop.Handle()
  }

  /// Watches until ``stop()`` is called, then records every save still
  /// waiting out its debounce (and commits, if a commit timer is set) and
  /// returns.
  ///
  /// Blocks in `poll` on the inotify descriptor; it wakes only for events
  /// and for deadlines (a debounce or a timer), so an idle watcher uses no
  /// CPU.
  /// - Throws: when the watches cannot be set up, or the catch-up fails
  ///   (`LOCKED`, `GIT`, `IO`). Problems with single files are reported as
  ///   events, not thrown.
  public func run() throws {
    let proceed = state.withLock { state in
      precondition(!state.started, "Watcher.run() may be called only once")
      state.started = true
      return !state.stopRequested
    }
    guard proceed else { return }
    let session = try WatchSession(
      store: store, options: options, counters: counters, handle: wake, emit: handler)
    try session.start()
    try session.run()
    session.finish()
  }

  /// Asks ``run()`` to flush and return. Safe from any thread, and safe to
  /// call twice or before ``run()`` (which then returns at once).
  public func stop() {
    state.withLock { $0.stopRequested = true }
    wake.stop()
  }
}
