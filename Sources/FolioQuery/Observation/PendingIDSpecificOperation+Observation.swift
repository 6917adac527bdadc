import Dispatch
import FolioCore

/// Live queries on one document (as in Ditto's `findByID` API).
///
/// Delivery rules, for every variant:
/// - the first event is the initial one (`isInitial`), with the document as
///   it is now (nil if there is none), delivered at once;
/// - after that, one event per committed transaction that changed the
///   document, whoever made it: this process, the `folio` CLI or another
///   process, the watcher, a merge from sync, `git pull`, an editor. A
///   change made outside Folio's transactions (a checkout writing many
///   files) may be seen in more than one step;
/// - `oldDocument` is the document as the handler last received it;
/// - the handler runs on `deliverOn`, by default the main queue (Ditto's
///   API: "Defaults to the main queue"), and never concurrently with
///   itself. **A command-line program must run the main queue**
///   (`dispatchMain()`, a `RunLoop`, or an `async` main, which drains it)
///   **or pass `deliverOn:`**, or no event arrives. The `changes()` async
///   sequences need neither: they take events on a queue of Folio's;
/// - after ``LiveQuery/stop()`` returns, or the ``LiveQuery`` is released,
///   nothing more is delivered.
///
/// A document file that does not parse (a hand edit in progress) is skipped
/// until it parses again.
extension PendingIDSpecificOperation {
  /// Calls `handler` with the document now, then after each transaction
  /// that changes it.
  ///
  /// ```swift
  /// let live = try todos.findByID("3f2a").observeLocal { document, event in
  ///     render(document)
  /// }
  /// ```
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_JSON` if the document does not
  ///   parse now; `IO` if the store's folders cannot be watched.
  ///
  /// The handler runs on the main queue, isolated to the main actor, so it
  /// may update a `@MainActor` model directly.
  public func observeLocal(
    _ handler: @escaping @MainActor @Sendable (Document?, SingleDocumentLiveQueryEvent) -> Void
  ) throws -> LiveQuery {
    try observeLocal(deliverOn: .main) { document, event in
      MainActor.assumeIsolated { handler(document, event) }
    }
  }

  /// ``observeLocal(_:)`` with the handler run on `queue`.
  public func observeLocal(
    deliverOn queue: DispatchQueue,
    _ handler: @escaping @Sendable (Document?, SingleDocumentLiveQueryEvent) -> Void
  ) throws -> LiveQuery {
    try start(queue: queue, nextSignal: false) { document, event, _ in handler(document, event) }
  }

  /// Like ``observeLocal(_:)``, but no event follows until the handler
  /// calls the `signalNext` it was given. Changes meanwhile coalesce into
  /// one event with the latest document, whose `oldDocument` is the one
  /// last delivered. Calling `signalNext` twice for one event is a
  /// programming error.
  ///
  /// ```swift
  /// let live = try todos.findByID("3f2a").observeLocalWithNextSignal { document, event, signalNext in
  ///     save(document) { signalNext() }
  /// }
  /// ```
  ///
  /// The handler runs on the main actor, as for ``observeLocal(_:)``.
  public func observeLocalWithNextSignal(
    _ handler:
      @escaping @MainActor @Sendable (Document?, SingleDocumentLiveQueryEvent, @escaping @Sendable () -> Void)
      -> Void
  ) throws -> LiveQuery {
    try observeLocalWithNextSignal(deliverOn: .main) { document, event, signalNext in
      MainActor.assumeIsolated { handler(document, event, signalNext) }
    }
  }

  /// ``observeLocalWithNextSignal(_:)`` with the handler run on `queue`.
  public func observeLocalWithNextSignal(
    deliverOn queue: DispatchQueue,
    _ handler:
      @escaping @Sendable (Document?, SingleDocumentLiveQueryEvent, @escaping @Sendable () -> Void) -> Void
  ) throws -> LiveQuery {
    try start(queue: queue, nextSignal: true) { document, event, signal in handler(document, event, signal!) }
  }

  /// The document now, then after each change, as an async sequence. Ending
  /// the iteration stops the live query; each iteration runs its own.
  ///
  /// ```swift
  /// for try await (document, event) in try todos.findByID("3f2a").changes() {
  ///     if !event.isInitial { print("changed:", document as Any) }
  /// }
  /// ```
  public func changes() throws -> LiveQueryChanges<(Document?, SingleDocumentLiveQueryEvent)> {
    _ = try collection.store.table(named: collection.name)
    return LiveQueryChanges { yield in
      try observeLocal(deliverOn: ObservationCenter.sequenceQueue) { document, event in
        yield((document, event))
      }
    }
  }

  private func start(
    queue: DispatchQueue, nextSignal: Bool,
    _ handler: @escaping LiveQueryCore<Document?, SingleDocumentLiveQueryEvent>.Handler
  ) throws -> LiveQuery {
    let store = collection.store
    _ = try store.table(named: collection.name)
    let core = LiveQueryCore<Document?, SingleDocumentLiveQueryEvent>(
      deliverOn: queue, nextSignal: nextSignal,
      initialEvent: { _ in SingleDocumentLiveQueryEvent(isInitial: true, oldDocument: nil) },
      changeEvent: { old, new in
        old == new ? nil : SingleDocumentLiveQueryEvent(isInitial: false, oldDocument: old)
      },
      handler: handler)
    let observer = SingleDocumentObserver(table: collection.name, pk: pk, core: core)
    return LiveQuery(center: store.observation, id: try store.observation.add(observer, store: store))
  }
}
