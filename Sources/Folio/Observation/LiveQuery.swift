import Synchronization

/// A running live query, returned by `observeLocal` and its variants.
///
/// Keep it for as long as you want events. ``stop()``, or releasing the
/// last reference, ends delivery for good: once `stop()` returns, the
/// handler is not running (unless `stop()` was called from inside it) and
/// will not be called again.
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

/// Follows one document (seed `000_*` `findByID(_:).observeLocal`).
final class SingleDocumentObserver: StoreObserver {
  let table: String
  let pk: String
  let core: LiveQueryCore<Document?, SingleDocumentLiveQueryEvent>

  init(table: String, pk: String, core: LiveQueryCore<Document?, SingleDocumentLiveQueryEvent>) {
    self.table = table
    self.pk = pk
    self.core = core
  }

  func refresh(store: Store, changed: Set<String>?, cache: DocumentCache) throws {
    if let changed, !changed.contains(pk) { return }
    core.update(try cache.document(store: store, table: table, pk: pk))
  }

  func stop() { core.stop() }
}
