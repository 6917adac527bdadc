import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Synchronization

/// Keeps a document, or every document a query covers, wanted on this
/// replica (Ditto's `subscribe`): while it is alive, `sync` brings back
/// covered documents that were evicted, and the store pulls other replicas'
/// changes on its own (every `sync: pull-every` of `folio.yaml`, 30 s by
/// default; see ``SyncConfig`` and ``Store/onPull(_:)``).
///
/// ```swift
/// let sub = try todos.findByID("3f2a").subscribe()
/// // …remote changes to 3f2a now arrive without calling sync…
/// try store.sync()      // 3f2a is back in the working tree if it was evicted
/// sub.cancel()
/// ```
/// Cancel is safe to call twice, and runs on deinit. The store lists the
/// live ones in ``Store/activeSubscriptions``.
///
/// Evicting a covered document is allowed (`evict()` does not check), but
/// while the subscription lives, the next `sync` brings the document back.
public final class Subscription: Sendable {
  private let registry: SubscriptionRegistry
  private let id: Int
  /// What it keeps on this replica.
  public let target: SubscriptionTarget

  init(registry: SubscriptionRegistry, target: SubscriptionTarget) {
    self.registry = registry
    self.target = target
    self.id = registry.add(target)
  }

  /// Ends the subscription.
  public func cancel() { registry.remove(id) }

  deinit { registry.remove(id) }
}

/// The live subscriptions of one store, guarded by a mutex.
final class SubscriptionRegistry: Sendable {
  private let state = Mutex<(next: Int, targets: [Int: SubscriptionTarget])>((0, [:]))

  /// Told when the first subscription arrives (true) and when the last one
  /// ends (false); the store starts and stops pulling on it.
  private let activity = Mutex<(@Sendable (Bool) -> Void)?>(nil)

  func onActivityChange(_ handler: @escaping @Sendable (Bool) -> Void) {
    activity.withLock { $0 = handler }
  }

  func add(_ target: SubscriptionTarget) -> Int {
    let (id, first) = state.withLock { state in
      state.next += 1
      state.targets[state.next] = target
      return (state.next, state.targets.count == 1)
    }
    if first { activity.withLock { $0 }?(true) }
    return id
  }

  func remove(_ id: Int) {
    let last = state.withLock { state in
      state.targets.removeValue(forKey: id) != nil && state.targets.isEmpty
    }
    if last { activity.withLock { $0 }?(false) }
  }

  /// The live targets, oldest first.
  var targets: [SubscriptionTarget] {
    state.withLock { state in state.targets.sorted { $0.key < $1.key }.map(\.value) }
  }

  /// Whether any live subscription covers the document.
  func covers(table: TableConfig, pk: String, document: JSONObject) -> Bool {
    targets.contains { target in
      switch target {
      case .document(let name, let wanted): name == table.name && wanted.utf8Equals(pk)
      case .query(let query):
        query.collection.name == table.name && query.covers(pk: pk, document: document, table: table)
      }
    }
  }
}

extension PendingIDSpecificOperation {
  /// Subscribes to the document: while the returned handle is alive, `sync`
  /// keeps it on this replica, bringing it back if it was evicted.
  ///
  /// ```swift
  /// let sub = try todos.findByID("3f2a").subscribe()   // keep it alive
  /// ```
  /// - Throws: `UNKNOWN_TABLE` if `folio.yaml` does not define the table.
  public func subscribe() throws -> Subscription {
    _ = try collection.store.table(named: collection.name)
    return Subscription(
      registry: collection.store.subscriptions, target: .document(table: collection.name, pk: pk))
  }
}

extension Query {
  /// Subscribes to every document this query covers (its filter and range):
  /// while the returned handle is alive, `sync` brings back covered
  /// documents that were evicted.
  ///
  /// ```swift
  /// let sub = try todos.query().where("done == false").subscribe()
  /// ```
  /// - Throws: `UNKNOWN_TABLE` if `folio.yaml` does not define the table.
  public func subscribe() throws -> Subscription {
    _ = try collection.store.table(named: collection.name)
    return Subscription(registry: collection.store.subscriptions, target: .query(self))
  }
}
