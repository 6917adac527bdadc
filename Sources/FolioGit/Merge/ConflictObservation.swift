import Dispatch
import FolioQuery
import Synchronization

/// A running observation of the open conflicts, returned by
/// ``Store/observeConflicts(table:deliverOn:_:)``.
///
/// Keep it for as long as you want events. ``stop()``, or releasing it,
/// ends delivery: once `stop()` returns no handler call starts, and none is
/// running (unless `stop()` is called from inside the handler).
///
/// ```swift
/// let watch = try store.observeConflicts(table: "todos") { conflicts, event in
///     badge.count = conflicts.count
/// }
/// // ...
/// watch.stop()
/// ```
public final class ConflictObservation: Sendable {
  private let core: LiveQueryCore<[Conflict], ConflictListEvent>
  private let watcher: Mutex<ConflictWatcher?>

  init(core: LiveQueryCore<[Conflict], ConflictListEvent>, watcher: ConflictWatcher) {
    self.core = core
    self.watcher = Mutex(watcher)
  }

  /// Ends delivery. Safe to call twice; also runs on deinit.
  public func stop() {
    watcher.withLock { watcher in
      defer { watcher = nil }
      return watcher
    }?.stop()
    core.stop()
  }

  /// Whether ``stop()`` has been called.
  public var isStopped: Bool { watcher.withLock { $0 == nil } }

  deinit { stop() }
}

extension ConflictObservation: LiveHandle {}
