import FolioTestSupport
import Foundation
import Testing

@testable import Folio
@testable import FolioCore
@testable import FolioGit
@testable import FolioJSON
@testable import FolioSystem

/// Seed `000_*`: a live subscription is how an app asks for other replicas'
/// changes, so the store pulls on its own while one is alive, and stops when
/// the last one ends.
struct SubscriptionPullTests {
  static func yaml(sync: String) -> String { SyncTests.yaml + "\nsync:\n" + sync }

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
    let pulls = EventRecorder<Bool>()
    // Set below: the subscription to cancel from the pull handler, which
    // runs between pulls, so that no pull is under way when it ends.
    let cancelAtNextPull = Shared<Subscription?>(nil)
    let cancelled = EventRecorder<Bool>()
    b.onPull { result in
      if case .success = result { pulls.append(true) } else { pulls.append(false) }
      let subscription = cancelAtNextPull.update { pending in
        defer { pending = nil }
        return pending
      }
      if let subscription {
        subscription.cancel()
        cancelled.append(true)
      }
    }
    let seen = EventRecorder<JSONValue?>()
    let live = try b.collection("todos").findByID("t").observeLocal { document, _ in
      seen.append(document?["views"])
    }
    defer { live.stop() }
    #expect(seen.wait(for: 1) == [1])

    // No subscription: a's change stays on the remote.
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    try a.sync()
    Thread.sleep(forTimeInterval: 0.5)
    #expect(try views(b, "t") == 1)
    #expect(pulls.all.isEmpty)

    // Subscribed: it arrives without a call to sync, and the observer sees it.
    let subscription = try b.collection("todos").findByID("t").subscribe()
    #expect(seen.wait { $0.last == 3 }.last == 3)
    #expect(try views(b, "t") == 3)
    // It keeps pulling: a later change arrives too.
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 10]])
    try a.sync()
    #expect(seen.wait { $0.last == 13 }.last == 13)
    #expect(!pulls.all.contains(false))

    // Cancelled: pulling stops.
    cancelAtNextPull.update { $0 = subscription }
    #expect(cancelled.wait(for: 1) == [true], "no pull came to cancel the subscription")
    try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 100]])
    try a.sync()
    let pulled = pulls.all.count
    Thread.sleep(forTimeInterval: 0.5)
    #expect(pulls.all.count == pulled)
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

  @Test func withTheDefaultsAStoreWithoutARemoteDoesNotPull() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write("s/folio.yaml", SyncTests.yaml)
    let store = try Store.create(at: URL(fileURLWithPath: scratch.path + "/s"))
    let pulls = EventRecorder<Bool>()
    store.onPull { _ in pulls.append(true) }
    let subscription = try store.collection("todos").findByID("x").subscribe()
    Thread.sleep(forTimeInterval: 0.3)
    #expect(pulls.all.isEmpty)
    subscription.cancel()
  }
}
