import Dispatch
import FolioCore
import Synchronization

/// Pulls a store from its remote on a timer while any subscription is
/// alive: the first pull at once, then one every `sync: pull-every`.
///
/// Pulls run one at a time on a private serial queue, so a slow pull delays
/// the next tick instead of overlapping it. The timer holds the store weakly:
/// a store that goes away stops pulling.
final class SubscriptionPuller: Sendable {
  /// Starts calling a tick on a queue at once and then every interval, as
  /// a repeating dispatch timer does; returns what cancels it, after which
  /// no tick starts.
  typealias TickSource =
    @Sendable (
      _ interval: Duration, _ queue: DispatchQueue, _ tick: @escaping @Sendable () -> Void
    ) -> @Sendable () -> Void

  private let queue = DispatchQueue(label: "folio.subscription-pull")
  /// What cancels the running ticks, if any.
  private let cancelTicks = Mutex<(@Sendable () -> Void)?>(nil)
  /// Told the outcome of every pull.
  private let handler = Mutex<(@Sendable (Result<SyncSummary, any Error>) -> Void)?>(nil)
  /// Tests only: the ticks' source in place of a dispatch timer, set before
  /// the first subscription; nil (a dispatch timer) otherwise. A test that
  /// fires ticks by hand sees that a tick pulls nothing, or that no tick is
  /// left to fire, where with a timer it could only wait and see.
  let tickSource = Mutex<TickSource?>(nil)

  func setHandler(_ newHandler: (@Sendable (Result<SyncSummary, any Error>) -> Void)?) {
    handler.withLock { $0 = newHandler }
  }

  /// Starts pulling `store` every `interval`, unless already started.
  func start(_ store: Store, every interval: Duration) {
    let source = tickSource.withLock { $0 } ?? Self.dispatchTimer
    cancelTicks.withLock { cancel in
      guard cancel == nil else { return }
      cancel = source(interval, queue) { [weak store, weak self] in
        guard let store, let self else { return }
        let result = Result { try store.pullForSubscriptions() }
        if case .success(nil) = result { return }
        self.handler.withLock { $0 }?(result.map { $0! })
      }
    }
  }

  /// The ticks of a repeating dispatch timer on `queue`, the first at once.
  private static func dispatchTimer(
    every interval: Duration, on queue: DispatchQueue, _ tick: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void {
    // Unchecked: a dispatch source may be cancelled from any thread.
    nonisolated(unsafe) let source = DispatchSource.makeTimerSource(queue: queue)
    let (seconds, attoseconds) = interval.components
    let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    source.schedule(deadline: .now(), repeating: .nanoseconds(max(nanoseconds, 1_000_000)))
    source.setEventHandler(handler: tick)
    source.resume()
    return { source.cancel() }
  }

  /// Stops pulling; a pull already running finishes.
  func stop() {
    cancelTicks.withLock { cancel in
      cancel?()
      cancel = nil
    }
  }

  deinit { cancelTicks.withLock { $0?() } }
}
