import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Synchronization
import Testing

@testable import FolioGit

/// Seed `000_*`: a live subscription is how an app asks for other replicas'
/// changes, so the store pulls on its own while one is alive, and stops when
/// the last one ends.
struct SubscriptionPullTests {
  static func yaml(sync: String) -> String { SyncTests.yaml + "\nsync:\n" + sync }

  /// A store's pull ticks, fired by hand in place of its timer.
  final class Ticks: Sendable {
    private let running = Mutex<[Int: (queue: DispatchQueue, tick: @Sendable () -> Void)]>([:])
    private let next = Mutex(0)

    /// Puts these ticks in place of `store`'s timer.
    init(of store: Store) {
      store.puller.tickSource.withLock { $0 = self.start }
    }

    private func start(
      every _: Duration, on queue: DispatchQueue, _ tick: @escaping @Sendable () -> Void
    ) -> @Sendable () -> Void {
      let id = next.withLock {
        $0 += 1
        return $0
      }
      running.withLock { $0[id] = (queue, tick) }
      return { self.running.withLock { _ = $0.removeValue(forKey: id) } }
    }

    /// How many tick sources run: started and not cancelled.
    var count: Int { running.withLock { $0.count } }

    /// Fires every running source's tick once on its queue, as its timer
    /// would, and returns when the ticks are done: whatever they pull has
    /// been pulled, and reported to `onPull`.
    func fire() {
      for id in running.withLock({ $0.keys.sorted() }) {
        guard let queue = running.withLock({ $0[id]?.queue }) else { continue }
        // Looked up on the queue: one cancelled meanwhile does not tick.
        queue.sync {
          let tick = running.withLock { $0[id]?.tick }
          tick?()
        }
      }
    }
  }

  func views(_ store: Store, _ pk: String) throws -> JSONValue? {
    try store.collection("todos").findByID(pk).exec()?.value["views"]
  }

  @Test func pullsOnlyWhileASubscriptionIsAlive() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml(sync: "  pull-every: 100ms"))
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 1])
    try a.sync()
    let b = try fixture.clone("b")
    let ticks = Ticks(of: b)
    let pulls = EventRecorder<Bool>()
    b.onPull { result in
      if case .success = result { pulls.append(true) } else { pulls.append(false) }
    }
    let seen = EventRecorder<JSONValue?>()
    let live = try b.collection("todos").findByID("t").observeLocal { document, _ in
      seen.append(document?["views"])
    }
    defer { live.stop() }
    #expect(seen.wait(for: 1) == [1])

    // No subscription: no timer runs, and a's change stays on the remote.
    // (A timer started anyway would pull on the tick fired here.)
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    try a.sync()
    #expect(ticks.count == 0)
    ticks.fire()
    #expect(try views(b, "t") == 1)
    #expect(pulls.all.isEmpty)

    // Subscribed: a tick brings it without a call to sync, and the observer
    // sees it.
    let subscription = try b.collection("todos").findByID("t").subscribe()
    #expect(ticks.count == 1)
    ticks.fire()
    #expect(pulls.all == [true])
    #expect(seen.wait { $0.last == 3 }.last == 3)
    #expect(try views(b, "t") == 3)
    // It keeps pulling: a later change arrives with the next tick.
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 10]])
    try a.sync()
    ticks.fire()
    #expect(pulls.all == [true, true])
    #expect(seen.wait { $0.last == 13 }.last == 13)

    // Cancelled: its timer stops, and no tick is left to bring a's next
    // change. (A timer left running would pull on the tick fired here.)
    subscription.cancel()
    #expect(ticks.count == 0)
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 100]])
    try a.sync()
    ticks.fire()
    #expect(pulls.all == [true, true])
    #expect(try views(b, "t") == 13)
    // An explicit sync still brings it.
    try b.sync()
    #expect(try views(b, "t") == 113)
  }

  @Test func aFailingPullIsReportedAndRetriedAndTheStoreStaysUsable() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    _ = try fixture.seed(yaml: Self.yaml(sync: "  remote: nowhere\n  pull-every: 50ms"))
    let b = try fixture.clone("b")
    let failures = EventRecorder<FolioError.Code>()
    b.onPull { result in
      if case .failure(let error as FolioError) = result { failures.append(error.code) }
    }
    let subscription = try b.collection("todos").query().subscribe()
    // Every tick tries again and says why it failed.
    #expect(failures.wait(for: 2).prefix(2) == [.remote, .remote])
    try b.apply(table: "todos", pk: "n", op: .insert, columns: ["views": 5])
    #expect(try views(b, "n") == 5)
    subscription.cancel()
  }

  /// A `folio.yaml` from a remote cannot make subscribers pull without a
  /// pause: `pull-every` has a floor.
  @Test func pullEveryHasAFloor() throws {
    let config = try Config(yaml: Self.yaml(sync: "  pull-every: 1ms"))
    #expect(config.sync.pullEvery == .milliseconds(1))
    #expect(config.sync.effectivePullInterval == .seconds(1))
    #expect(try Config(yaml: Self.yaml(sync: "  pull-every: 5m")).sync.effectivePullInterval == .seconds(300))
    #expect(try Config(yaml: Self.yaml(sync: "  pull-every: off")).sync.effectivePullInterval == nil)
  }

  @Test func withTheDefaultsAStoreWithoutARemoteDoesNotPull() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write("s/folio.yaml", SyncTests.yaml)
    let store = try Store.create(at: URL(fileURLWithPath: scratch.path + "/s"))
    let ticks = Ticks(of: store)
    let pulls = EventRecorder<Bool>()
    store.onPull { _ in pulls.append(true) }
    let subscription = try store.collection("todos").findByID("x").subscribe()
    // The timer runs (every 30 s by default); its ticks pull nothing.
    #expect(ticks.count == 1)
    ticks.fire()
    ticks.fire()
    #expect(pulls.all.isEmpty)
    subscription.cancel()
  }
}
