import Dispatch
import FolioCore

/// Live queries on a query's results.
///
/// The handler gets the documents, in order, and a ``LiveQueryEvent``:
/// `.initial` first, delivered at once, then `.update` after each committed
/// transaction that changes the results, with index sets and child events
/// (as in Firebase). A limited window slides: when a member is deleted or its
/// order value moves it out, the next document comes in; a change outside
/// the window sends nothing. The delivery rules are those of
/// ``PendingIDSpecificOperation/observeLocal(_:)``.
extension Query {
  /// Calls `handler` with the results now, then after each transaction that
  /// changes them.
  ///
  /// ```swift
  /// let live = try todos.query().orderBy(child: "lastUpdate").limitToLast(20).observeLocal { documents, event in
  ///     if case .update(let update) = event {
  ///         for child in update.childEvents { print(child.kind, child.key) }
  ///     }
  /// }
  /// ```
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_JSON` if a document does not parse
  ///   now; `IO` if the store's folders cannot be watched.
  ///
  /// The handler runs on the main queue, isolated to the main actor, so it
  /// may update a `@MainActor` model directly.
  public func observeLocal(_ handler: @escaping @MainActor @Sendable ([Document], LiveQueryEvent) -> Void)
    throws -> LiveQuery
  {
    try observeLocal(deliverOn: .main) { documents, event in
      MainActor.assumeIsolated { handler(documents, event) }
    }
  }

  /// ``observeLocal(_:)`` with the handler run on `queue`.
  public func observeLocal(
    deliverOn queue: DispatchQueue, _ handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void
  ) throws -> LiveQuery {
    try start(queue: queue, nextSignal: false) { documents, event, _ in handler(documents, event) }
  }

  /// Like ``observeLocal(_:)``, but no event follows until the handler
  /// calls `signalNext`; changes meanwhile coalesce into one update against
  /// the results last delivered.
  /// The handler runs on the main actor, as for ``observeLocal(_:)``.
  public func observeLocalWithNextSignal(
    _ handler:
      @escaping @MainActor @Sendable ([Document], LiveQueryEvent, @escaping @Sendable () -> Void) -> Void
  ) throws -> LiveQuery {
    try observeLocalWithNextSignal(deliverOn: .main) { documents, event, signalNext in
      MainActor.assumeIsolated { handler(documents, event, signalNext) }
    }
  }

  /// ``observeLocalWithNextSignal(_:)`` with the handler run on `queue`.
  public func observeLocalWithNextSignal(
    deliverOn queue: DispatchQueue,
    _ handler: @escaping @Sendable ([Document], LiveQueryEvent, @escaping @Sendable () -> Void) -> Void
  ) throws -> LiveQuery {
    try start(queue: queue, nextSignal: true) { documents, event, signal in handler(documents, event, signal!)
    }
  }

  /// The results now, then after each change, as an async sequence. Ending
  /// the iteration stops the live query; each iteration runs its own.
  public func changes() throws -> LiveQueryChanges<([Document], LiveQueryEvent)> {
    _ = try collection.store.table(named: collection.name)
    return LiveQueryChanges { yield in
      try observeLocal(deliverOn: ObservationCenter.sequenceQueue) { documents, event in
        yield((documents, event))
      }
    }
  }

  private func start(
    queue: DispatchQueue, nextSignal: Bool,
    _ handler: @escaping LiveQueryCore<[Document], LiveQueryEvent>.Handler
  ) throws -> LiveQuery {
    let store = collection.store
    let config = try store.table(named: collection.name)
    let ordering = QueryPlan(self, table: config).ordering
    let core = LiveQueryCore<[Document], LiveQueryEvent>(
      deliverOn: queue, nextSignal: nextSignal, initialEvent: { _ in .initial },
      changeEvent: { old, new in
        LiveQueryUpdate.diff(old: old, new: new, ordering: ordering).map { .update($0) }
      },
      handler: handler)
    let observer = QueryObserver(query: self, config: config, core: core)
    return LiveQuery(center: store.observation, id: try store.observation.add(observer, store: store))
  }
}
