import Dispatch
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// The delivery half of one live query: it turns each new state into an
/// event and hands it to the handler on the handler's queue.
///
/// Rules (STYLE.md, Concurrency): the initial event comes first; without
/// next-signal each state change becomes one event, in order; with
/// next-signal at most one event is outstanding and later states coalesce
/// into one pending state, diffed against the state last delivered; the
/// handler never runs concurrently with itself (it runs on a private serial
/// queue targeting the caller's queue, behind `gate`); nothing runs after
/// ``stop()`` returns.
package final class LiveQueryCore<Value: Sendable, Event: Sendable>: Sendable {
  package typealias Handler = @Sendable (Value, Event, _ signalNext: (@Sendable () -> Void)?) -> Void

  private struct State: Sendable {
    var stopped = false
    /// The newest state seen: what the next update is compared with.
    var latest: Value?
    /// Next-signal only: the state the handler last received.
    var delivered: Value?
    /// Next-signal only: a state waiting for `signalNext`.
    var pending: Value?
    var waiting = false
    var eventNumber = 0
    /// The thread running the handler, so `stop()` from inside the handler
    /// does not wait for itself.
    var deliveringThread: pthread_t?
  }

  private let queue: DispatchQueue
  private let nextSignal: Bool
  private let initialEvent: @Sendable (Value) -> Event
  private let changeEvent: @Sendable (Value, Value) -> Event?
  private let handler: Handler
  private let state = Mutex(State())
  /// Held while the handler runs; `stop()` takes it to wait for a running
  /// handler to finish. It guards no state (that is `state`'s job), so it
  /// is a plain lock, not a Mutex.
  private let gate = NSLock()

  /// - Parameters:
  ///   - changeEvent: the event from an old state to a new one, or nil when
  ///     nothing the observer sees has changed.
  package init(
    deliverOn queue: DispatchQueue, nextSignal: Bool, initialEvent: @escaping @Sendable (Value) -> Event,
    changeEvent: @escaping @Sendable (Value, Value) -> Event?, handler: @escaping Handler
  ) {
    // A private serial queue keeps the handler in order and never
    // concurrent with itself, even when the caller's queue is concurrent.
    self.queue = DispatchQueue(label: "folio.livequery", target: queue)
    self.nextSignal = nextSignal
    self.initialEvent = initialEvent
    self.changeEvent = changeEvent
    self.handler = handler
  }

  /// Takes a new state; the caller serializes calls.
  package func update(_ value: Value) {
    let send: (Value, Event, Int)? = state.withLock { s in
      if s.stopped { return nil }
      let event: Event
      if let latest = s.latest {
        guard let change = changeEvent(latest, value) else { return nil }
        event = change
      } else {
        event = initialEvent(value)
      }
      s.latest = value
      guard nextSignal else { return (value, event, 0) }
      if s.waiting {
        s.pending = value
        return nil
      }
      // The event goes against what was last delivered, not the latest state.
      let delivered = s.delivered.map { changeEvent($0, value) ?? event } ?? event
      s.delivered = value
      s.waiting = true
      s.eventNumber += 1
      return (value, delivered, s.eventNumber)
    }
    if let send { enqueue(send.0, send.1, number: send.2) }
  }

  private func signal(_ number: Int) {
    let send: (Value, Event, Int)? = state.withLock { s in
      precondition(s.waiting && s.eventNumber == number, "signalNext() called twice for one event")
      if s.stopped { return nil }
      guard let pending = s.pending else {
        s.waiting = false
        return nil
      }
      s.pending = nil
      guard let delivered = s.delivered, let event = changeEvent(delivered, pending) else {
        // It changed and changed back: nothing to deliver.
        s.waiting = false
        return nil
      }
      s.delivered = pending
      s.eventNumber += 1
      return (pending, event, s.eventNumber)
    }
    if let send { enqueue(send.0, send.1, number: send.2) }
  }

  private func enqueue(_ value: Value, _ event: Event, number: Int) {
    queue.async { self.deliver(value, event, number: number) }
  }

  private func deliver(_ value: Value, _ event: Event, number: Int) {
    gate.lock()
    defer { gate.unlock() }
    guard beginDelivery() else { return }
    var signal: (@Sendable () -> Void)?
    if nextSignal { signal = { @Sendable in self.signal(number) } }
    WaitGuard.marking { handler(value, event, signal) }
    endDelivery()
  }

  private func beginDelivery() -> Bool {
    state.withLock { (s: inout State) -> Bool in
      if s.stopped { return false }
      s.deliveringThread = pthread_self()
      return true
    }
  }

  private func endDelivery() {
    state.withLock { (s: inout State) -> Void in s.deliveringThread = nil }
  }

  /// Ends delivery for good; when it returns, no handler call will start,
  /// and none is running unless `stop()` was called from inside a handler
  /// or while holding the store lock: there a call already under way on
  /// another thread may be waiting for this one, so it is left to finish
  /// (see `WaitGuard`).
  package func stop() {
    let mustWait = state.withLock { s in
      s.stopped = true
      s.pending = nil
      guard let thread = s.deliveringThread else { return false }
      return pthread_equal(thread, pthread_self()) == 0
    }
    if mustWait && !WaitGuard.currentThreadIsMarked {
      gate.lock()
      gate.unlock()
    }
  }
}
