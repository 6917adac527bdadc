import Dispatch
import FolioJSON

/// Live queries whose results are decoded as a Swift type. The delivery
/// rules are those of ``Query/observeLocal(_:)``, with one more: an update
/// after which some document does not decode as `T` is skipped, and the
/// index sets of the update after it are then relative to results the
/// handler did not see (its values are whole and current). An initial
/// state that does not decode makes the call throw.
extension Query {
  /// Calls `handler` with the results decoded as `type` now, then after each
  /// transaction that changes them. Delivers on `queue`, by default the main
  /// queue (as in Ditto's `findByID` API).
  ///
  /// ```swift
  /// let live = try todos.query().where("done == false").observeLocal(as: Todo.self) { todos, event in
  ///     render(todos)
  /// }
  /// ```
  ///
  /// The handler runs on the main queue, isolated to the main actor, so it
  /// may update a `@MainActor` model directly.
  public func observeLocal<T: Decodable & Sendable>(
    as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder(),
    _ handler: @escaping @MainActor @Sendable ([T], LiveQueryEvent) -> Void
  ) throws -> LiveQuery {
    try observeLocal(as: type, deliverOn: .main, decoder: decoder) { values, event in
      MainActor.assumeIsolated { handler(values, event) }
    }
  }

  /// ``observeLocal(as:decoder:_:)`` with the handler run on `queue`.
  public func observeLocal<T: Decodable & Sendable>(
    as type: T.Type, deliverOn queue: DispatchQueue, decoder: JSONValueDecoder = JSONValueDecoder(),
    _ handler: @escaping @Sendable ([T], LiveQueryEvent) -> Void
  ) throws -> LiveQuery {
    // Decode the initial results here first, so that a mismatch throws.
    _ = try get().map { try $0.decode(type, decoder: decoder) }
    return try observeLocal(deliverOn: queue) { documents, event in
      guard let values = try? documents.map({ try $0.decode(type, decoder: decoder) }) else { return }
      handler(values, event)
    }
  }

  /// The results decoded as `type` now, then after each change, as an async
  /// sequence; see ``changes()``.
  ///
  /// ```swift
  /// for try await (todos, _) in try todos.query().changes(as: Todo.self) { render(todos) }
  /// ```
  public func changes<T: Decodable & Sendable>(
    as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder()
  )
    throws -> LiveQueryChanges<([T], LiveQueryEvent)>
  {
    _ = try collection.store.table(named: collection.name)
    return LiveQueryChanges { yield in
      try observeLocal(as: type, deliverOn: ObservationCenter.sequenceQueue, decoder: decoder) {
        values, event in
        yield((values, event))
      }
    }
  }
}
