import Dispatch
import FolioCore
import FolioJSON

/// Live queries on one document, decoded as a Swift type. The delivery
/// rules are those of ``PendingIDSpecificOperation/observeLocal(_:)``, with
/// one more: a change after which the document does not decode as `T` (an
/// edit in progress, a column of another type) is skipped, as a file that
/// does not parse is. The initial event is always delivered, with nil if
/// the document is missing or does not decode.
extension PendingIDSpecificOperation {
  /// Calls `handler` with the document decoded as `type` now, then after
  /// each transaction that changes it. Delivers on `queue`, by default the
  /// main queue (as in Ditto's `findByID` API).
  ///
  /// ```swift
  /// let live = try todos.findByID("a").observeLocal(as: Todo.self) { todo, event in
  ///     render(todo)
  /// }
  /// ```
  ///
  /// The handler runs on the main queue, isolated to the main actor, so it
  /// may update a `@MainActor` model directly.
  public func observeLocal<T: Decodable & Sendable>(
    as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder(),
    _ handler: @escaping @MainActor @Sendable (T?, SingleDocumentLiveQueryEvent) -> Void
  ) throws -> LiveQuery {
    try observeLocal(as: type, deliverOn: .main, decoder: decoder) { value, event in
      MainActor.assumeIsolated { handler(value, event) }
    }
  }

  /// ``observeLocal(as:decoder:_:)`` with the handler run on `queue`.
  public func observeLocal<T: Decodable & Sendable>(
    as type: T.Type, deliverOn queue: DispatchQueue, decoder: JSONValueDecoder = JSONValueDecoder(),
    _ handler: @escaping @Sendable (T?, SingleDocumentLiveQueryEvent) -> Void
  ) throws -> LiveQuery {
    try observeLocal(deliverOn: queue) { document, event in
      guard let document else { return handler(nil, event) }
      do {
        handler(try document.decode(type, decoder: decoder), event)
      } catch {
        if event.isInitial { handler(nil, event) }
      }
    }
  }

  /// The document decoded as `type` now, then after each change, as an
  /// async sequence; see ``changes()``.
  ///
  /// ```swift
  /// for try await (todo, event) in try todos.findByID("a").changes(as: Todo.self) {
  ///     print(event.isInitial ? "now" : "changed", todo?.title ?? "gone")
  /// }
  /// ```
  public func changes<T: Decodable & Sendable>(
    as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder()
  )
    throws -> LiveQueryChanges<(T?, SingleDocumentLiveQueryEvent)>
  {
    _ = try collection.store.table(named: collection.name)
    return LiveQueryChanges { yield in
      try observeLocal(as: type, deliverOn: ObservationCenter.sequenceQueue, decoder: decoder) {
        value, event in
        yield((value, event))
      }
    }
  }
}
