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
  private let queue = DispatchQueue(label: "folio.subscription-pull")
  /// The running timer, if any.
  private let timer = Mutex<(any DispatchSourceTimer)?>(nil)
  /// Told the outcome of every pull.
  private let handler = Mutex<(@Sendable (Result<SyncSummary, any Error>) -> Void)?>(nil)

  func setHandler(_ newHandler: (@Sendable (Result<SyncSummary, any Error>) -> Void)?) {
    handler.withLock { $0 = newHandler }
  }

  /// Starts pulling `store` every `interval`, unless already started.
  func start(_ store: Store, every interval: Duration) {
    timer.withLock { timer in
      guard timer == nil else { return }
      let source = DispatchSource.makeTimerSource(queue: queue)
      let (seconds, attoseconds) = interval.components
      let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
      source.schedule(deadline: .now(), repeating: .nanoseconds(max(nanoseconds, 1_000_000)))
      source.setEventHandler { [weak store, weak self] in
        guard let store, let self else { return }
        let result = Result { try store.pullForSubscriptions() }
        if case .success(nil) = result { return }
        self.handler.withLock { $0 }?(result.map { $0! })
      }
      source.resume()
      timer = source
    }
  }

  /// Stops pulling; a pull already running finishes.
  func stop() {
    timer.withLock { timer in
      timer?.cancel()
      timer = nil
    }
  }

  deinit { timer.withLock { $0?.cancel() } }
}

extension Store {
  /// Sets the function told the outcome of every automatic pull (see
  /// ``SyncConfig``): the sync summary, or the error that stopped it. A
  /// failed pull is tried again on the next tick, so an unreachable remote
  /// or a held lock only delays the data. Pass nil to stop being told.
  ///
  /// ```swift
  /// store.onPull { result in
  ///     if case .failure(let error) = result { print("pull failed: \(error)") }
  /// }
  /// let sub = try store.collection("todos").findByID("3f2a").subscribe()
  /// ```
  /// The function runs on a private queue, never concurrently with itself.
  public func onPull(_ handler: (@Sendable (Result<SyncSummary, any Error>) -> Void)?) {
    puller.setHandler(handler)
  }

  /// Starts or stops the automatic pull as subscriptions come and go.
  func subscriptionsChanged(active: Bool) {
    guard active, let interval = config.sync.pullEvery else {
      puller.stop()
      return
    }
    puller.start(self, every: interval)
  }

  /// One automatic pull: `sync` without the push. Nil when there is nothing
  /// to pull from: the default remote is not set up in this repository
  /// (a store that only lives here), or every subscription ended.
  func pullForSubscriptions() throws -> SyncSummary? {
    guard !subscriptions.targets.isEmpty else { return nil }
    let remote = config.sync.remote
    if !config.sync.isExplicit, try openRepository().remoteURL(remote) == nil { return nil }
    return try sync(remote: remote, push: false)
  }
}
