import Dispatch
import FolioCore

/// Live queries by child event type (Firebase's `observeEventType:` with
/// `WEventTypeChildAdded` and the previous sibling's key).
///
/// A thin layer over ``Query/observeLocal(_:)``: the handler gets one call
/// per child event of the chosen kind, with the document and `prevKey`.
/// Delivery rules:
/// - `.childAdded` first gets every document of the results as they are
///   now, in order, each with the pk before it (nil for the first), as the
///   Firebase child-added listener does; the other kinds get nothing at start;
/// - then, for each committed transaction that changes the results, the
///   events of that kind from the update's ``LiveQueryUpdate/childEvents``,
///   in their order, with the same `prevKey` (for `.childRemoved`, the pk
///   before it in the old results, and its last content);
/// - the handler runs on Folio's serial queue, or on `deliverOn`, never
///   concurrently with itself; nothing arrives after ``LiveQuery/stop()``
///   returns or the ``LiveQuery`` is released.
///
/// Observers of different kinds are separate live queries; one that wants
/// every kind, in the order removed, added, moved, changed, uses
/// ``Query/observeLocal(_:)`` and reads `childEvents`.
extension Query {
  /// Calls `handler` for each child event of kind `eventType`.
  ///
  /// ```swift
  /// let live = try messages.query().orderBy(child: "sent").limitToLast(50)
  ///     .observeLocal(.childAdded) { message, prevKey in
  ///         list.insert(message, after: prevKey)
  ///     }
  /// ```
  /// - Parameters:
  ///   - eventType: which events: `.childAdded`, `.childChanged`,
  ///     `.childRemoved` or `.childMoved`.
  ///   - handler: the document (for `.childRemoved`, as last delivered) and
  ///     the pk of the one just before it, or nil if it is first.
  /// - Throws: as ``Query/observeLocal(_:)``.
  public func observeLocal(
    _ eventType: ChildEvent.Kind,
    _ handler: @escaping @MainActor @Sendable (Document, _ prevKey: String?) -> Void
  ) throws -> LiveQuery {
    try observeLocal(eventType, deliverOn: .main) { document, prevKey in
      MainActor.assumeIsolated { handler(document, prevKey) }
    }
  }

  /// ``observeLocal(_:_:)-(ChildEvent.Kind,_)`` with the handler run on
  /// `queue`.
  public func observeLocal(
    _ eventType: ChildEvent.Kind, deliverOn queue: DispatchQueue,
    _ handler: @escaping @Sendable (Document, _ prevKey: String?) -> Void
  ) throws -> LiveQuery {
    try observeLocal(deliverOn: queue) { documents, event in
      switch event {
      case .initial:
        // seed 004: a child-added listener first hears of every child there is.
        guard eventType == .added else { return }
        for (i, document) in documents.enumerated() { handler(document, i > 0 ? documents[i - 1].pk : nil) }
      case .update(let update):
        for child in update.childEvents where child.kind == eventType {
          handler(child.document, child.prevKey)
        }
      }
    }
  }
}

extension ChildEvent.Kind {
  /// ``added``, by the name Firebase gives it.
  public static var childAdded: Self { .added }
  /// ``changed``, by the name Firebase gives it.
  public static var childChanged: Self { .changed }
  /// ``removed``, by the name Firebase gives it.
  public static var childRemoved: Self { .removed }
  /// ``moved``, by the name Firebase gives it.
  public static var childMoved: Self { .moved }
}
