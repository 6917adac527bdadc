import Synchronization

/// A live query as an async sequence, from `changes()`: each iteration
/// starts its own live query, and ending the iteration (leaving the loop,
/// or cancelling its task) stops it (GRDB `ValueObservation.values()`).
///
/// ```swift
/// for await (document, event) in try todos.findByID("3f2a").changes() {
///     if !event.isInitial { break }
/// }
/// ```
/// If the live query cannot start (a document does not parse, the folders
/// cannot be watched), the sequence ends at once.
public struct LiveQueryChanges<Element: Sendable>: AsyncSequence, Sendable {
  typealias Start = @Sendable (@escaping @Sendable (Element) -> Void) throws -> LiveQuery

  private let start: Start

  init(start: @escaping Start) { self.start = start }

  /// Starts the live query.
  public func makeAsyncIterator() -> Iterator {
    let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
    let live = try? start { continuation.yield($0) }
    if live == nil { continuation.finish() }
    let owner = Owner(live)
    // The task was cancelled, or the consumer is gone.
    continuation.onTermination = { _ in owner.stop() }
    return Iterator(base: stream.makeAsyncIterator(), owner: owner)
  }

  /// Delivers the events; dropping it stops the live query.
  public struct Iterator: AsyncIteratorProtocol {
    var base: AsyncStream<Element>.Iterator
    let owner: Owner

    /// The next event, or nil once the live query has stopped.
    public mutating func next() async -> Element? {
      await base.next()
    }
  }

  /// Owns the live query for the iterator; stopping twice is fine.
  public final class Owner: Sendable {
    private let live: Mutex<LiveQuery?>

    init(_ live: LiveQuery?) { self.live = Mutex(live) }

    func stop() { live.withLock { $0 }?.stop() }

    deinit { stop() }
  }
}
