import Synchronization

/// A live query as an async sequence, from `changes()`: each iteration
/// starts its own live query, and ending the iteration (leaving the loop,
/// or cancelling its task) stops it (GRDB `ValueObservation.values()`).
///
/// ```swift
/// for try await (document, event) in try todos.findByID("3f2a").changes() {
///     if !event.isInitial { break }
/// }
/// ```
/// `changes()` throws at once for a table that does not exist. If the live
/// query cannot start when the iteration begins (a document does not
/// parse, the store's folders cannot be watched), the first `next()` throws
/// that error, and the sequence ends. Once started it never fails: it ends
/// only when the iteration does.
public struct LiveQueryChanges<Element: Sendable>: AsyncSequence, Sendable {
  package typealias Start = @Sendable (@escaping @Sendable (Element) -> Void) throws -> any LiveHandle

  private let start: Start

  package init(start: @escaping Start) { self.start = start }

  /// Starts the live query.
  public func makeAsyncIterator() -> Iterator {
    let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
    let live: (any LiveHandle)?
    var failure: (any Error)?
    do {
      live = try start { continuation.yield($0) }
    } catch {
      live = nil
      failure = error
      continuation.finish()
    }
    let owner = Owner(live)
    // The task was cancelled, or the consumer is gone.
    continuation.onTermination = { _ in owner.stop() }
    return Iterator(base: stream.makeAsyncIterator(), owner: owner, failure: failure)
  }

  /// Delivers the events; dropping it stops the live query.
  public struct Iterator: AsyncIteratorProtocol {
    var base: AsyncStream<Element>.Iterator
    let owner: Owner
    /// Why the live query did not start; thrown by the first `next()`.
    var failure: (any Error)?

    /// The next event, or nil once the live query has stopped.
    /// - Throws: the error that kept the live query from starting (first
    ///   call only).
    public mutating func next() async throws -> Element? {
      if let failure {
        self.failure = nil
        throw failure
      }
      return await base.next()
    }
  }

  /// Owns the live query for the iterator; stopping twice is fine.
  public final class Owner: Sendable {
    private let live: Mutex<(any LiveHandle)?>

    init(_ live: (any LiveHandle)?) { self.live = Mutex(live) }

    func stop() { live.withLock { $0 }?.stop() }

    deinit { stop() }
  }
}

/// What an async sequence's iteration stops when it ends: a ``LiveQuery``,
/// or a later layer's observation of the same shape (the open conflicts).
package protocol LiveHandle: Sendable {
  /// Ends delivery; safe twice.
  func stop()
}

extension LiveQuery: LiveHandle {}
