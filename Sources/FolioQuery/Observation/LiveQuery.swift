import FolioCore
import FolioJSON
import Synchronization

/// A running live query, returned by `observeLocal` and its variants.
///
/// Keep it for as long as you want events. ``stop()``, or releasing the
/// last reference, ends delivery for good: once `stop()` returns, the
/// handler will not be called again, and is not running. Two exceptions to
/// the second part, both to avoid a deadlock: when `stop()` is called from
/// inside a live query's handler, or inside `store.write`, a handler call
/// already running on another thread (which may be waiting for this
/// thread's write or handler to end) is left to finish.
///
/// ```swift
/// let live = try todos.findByID("3f2a").observeLocal { document, event in
///     print(event.isInitial ? "now" : "changed", document?["title"] ?? "deleted")
/// }
/// // ...
/// live.stop()
/// ```
public final class LiveQuery: Sendable {
  private let center: ObservationCenter
  private let id: Mutex<Int?>

  init(center: ObservationCenter, id: Int) {
    self.center = center
    self.id = Mutex(id)
  }

  /// Ends delivery. Safe to call twice; also runs on deinit.
  public func stop() {
    if let id = id.withLock({ id in
      defer { id = nil }
      return id
    }) {
      center.remove(id)
    }
  }

  /// Whether ``stop()`` has been called.
  public var isStopped: Bool { id.withLock { $0 == nil } }

  deinit { stop() }
}

/// Follows one document (Ditto's `findByID(_:).observeLocal`).
final class SingleDocumentObserver: StoreObserver {
  let table: String
  let pk: String
  let core: LiveQueryCore<Document?, SingleDocumentLiveQueryEvent>

  init(table: String, pk: String, core: LiveQueryCore<Document?, SingleDocumentLiveQueryEvent>) {
    self.table = table
    self.pk = pk
    self.core = core
  }

  func prepare(store: Store, changed: Set<ExactKey>?, cache: DocumentCache) throws -> (() -> Void)? {
    if let changed, !changed.contains(exact: pk) { return nil }
    let document = try cache.document(store: store, table: table, pk: pk)
    return { self.core.update(document) }
  }

  var footprint: ObserverIndex.Footprint { .known(pks: [ExactKey(pk)], range: nil) }

  func stop() { core.stop() }
}
