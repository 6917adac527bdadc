import Dispatch
import FolioCore
import Synchronization

/// Group commit for the server's writes: requests that arrive while a
/// transaction is being made durable wait, and then go together in the next
/// one, so concurrent clients share one durability point (one journal
/// fsync) as the writes in one ``Store/write(_:)`` do.
///
/// Each request's change runs in a savepoint of the shared transaction,
/// in arrival order: a change that fails (400, 412) is undone alone and
/// the others go on. A later change reads the earlier ones' writes, so
/// `if-match` compares against exactly what the transaction will commit.
/// A change marked `alone` (it reads a whole table or the store from the
/// files, which do not show the transaction's own writes) gets a
/// transaction to itself.
///
/// No thread is added: the first request to find no transaction under way
/// makes it (the leader); when it is done it hands the lead to the oldest
/// request still waiting, which takes every request queued by then.
///
/// Transactions go through ``Store/writeDeferringFlush(_:)``: each is
/// durable at its journal record's flush, and the files of many are flushed
/// together, by a checkpoint once writes pause for ``idleCheckpoint`` (or
/// the journal's limit is reached, or anything else writes). So a burst
/// costs one flush per transaction, not one per document.
final class WriteBatcher: Sendable {
  /// How long writes must pause before their files are flushed.
  static let idleCheckpoint: DispatchTimeInterval = .milliseconds(50)
  typealias Change = (WriteTransaction) throws -> HTTPReply

  /// One request's wait for its reply.
  private final class Ticket: Sendable {
    enum Outcome {
      case waiting
      /// Run the next transaction.
      case lead
      case done(Result<HTTPReply, any Error>)
    }
    let change: @Sendable (WriteTransaction) throws -> HTTPReply
    let alone: Bool
    let outcome = Mutex<Outcome>(.waiting)
    let signal = DispatchSemaphore(value: 0)

    init(change: @escaping @Sendable (WriteTransaction) throws -> HTTPReply, alone: Bool) {
      self.change = change
      self.alone = alone
    }
  }

  private struct Queue {
    var waiting: [Ticket] = []
    var leading = false
  }

  private let queue = Mutex(Queue())
  /// Counts transactions, so that a checkpoint scheduled after one runs
  /// only if none followed.
  private let generation = Mutex(0)

  /// Runs `change` in the next transaction on `store` and returns its reply.
  /// - Throws: what `change` threw, or the commit's error.
  func write(
    _ store: Store, alone: Bool, _ change: @escaping @Sendable (WriteTransaction) throws -> HTTPReply
  ) throws -> HTTPReply {
    let ticket = Ticket(change: change, alone: alone)
    let leads = queue.withLock { queue in
      queue.waiting.append(ticket)
      if queue.leading { return false }
      queue.leading = true
      return true
    }
    if !leads {
      while true {
        ticket.signal.wait()
        switch ticket.outcome.withLock({ $0 }) {
        case .waiting: continue
        case .lead: break
        case .done(let result): return try result.get()
        }
        break
      }
    }
    // Leading: take what waits, run it, hand the lead on.
    let batch = queue.withLock { queue -> [Ticket] in
      let first = queue.waiting.first!
      let count =
        first.alone ? 1 : (queue.waiting.firstIndex(where: \.alone) ?? queue.waiting.count)
      defer { queue.waiting.removeFirst(count) }
      return Array(queue.waiting.prefix(count))
    }
    run(batch, on: store)
    scheduleCheckpoint(store)
    let next = queue.withLock { queue -> Ticket? in
      guard let next = queue.waiting.first else {
        queue.leading = false
        return nil
      }
      return next
    }
    if let next {
      next.outcome.withLock { $0 = .lead }
      next.signal.signal()
    }
    // The leader's own request was in the batch it ran.
    guard case .done(let result) = ticket.outcome.withLock({ $0 }) else {
      preconditionFailure("a leader's batch holds its own request")
    }
    return try result.get()
  }

  /// Flushes the deferred files once no transaction has followed for
  /// ``idleCheckpoint``.
  private func scheduleCheckpoint(_ store: Store) {
    let current = generation.withLock { value -> Int in
      value += 1
      return value
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + Self.idleCheckpoint) { [self] in
      guard generation.withLock({ $0 == current }) else { return }
      // A failure leaves the records in the journal, where the next write
      // or open finishes them.
      try? store.checkpointDeferredWrites()
    }
  }

  private func run(_ batch: [Ticket], on store: Store) {
    var results: [Result<HTTPReply, any Error>] = []
    do {
      try store.writeDeferringFlush { transaction in
        // The body runs again if a document changed before the durability
        // point: the replies of the last run are the ones that count.
        // Each change is checked against the schemas in its own savepoint,
        // so one client's bad document fails its request alone.
        results = batch.map { ticket in
          Result {
            try transaction.savepoint {
              let reply = try ticket.change(transaction)
              try transaction.checkSchemas()
              return reply
            }
          }
        }
      }
    } catch {
      // The commit failed: no change in it happened.
      results = results.map { result in
        if case .failure = result { return result }
        return .failure(error)
      }
      if results.count < batch.count { results = batch.map { _ in .failure(error) } }
    }
    for (ticket, result) in zip(batch, results) {
      ticket.outcome.withLock { $0 = .done(result) }
      ticket.signal.signal()
    }
  }
}
