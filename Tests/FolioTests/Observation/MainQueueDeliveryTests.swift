import Dispatch
import Folio
import FolioJSON
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// Issue 15 §4, seed `000_*`: "The dispatch queue that will be used to
/// deliver live query updates. Defaults to the main queue."
///
/// The test runner's `async` main drains the main queue (as `dispatchMain()`
/// would), and these tests await on the main actor, so the main thread is
/// free to deliver while they wait.
/// On Linux, once `dispatchMain()` has run, the main queue's blocks run on
/// a pool thread, not the process's first thread, so `Thread.isMainThread`
/// says nothing here; a queue-specific value marks the main queue instead.
@MainActor
struct MainQueueDeliveryTests {
  nonisolated static let mainKey = DispatchSpecificKey<String>()

  /// Whether the caller runs on the main queue.
  nonisolated static var onMainQueue: Bool {
    DispatchQueue.main.setSpecific(key: mainKey, value: "main")
    return DispatchQueue.getSpecific(key: mainKey) == "main"
  }

  @Test func observeLocalWithoutAQueueDeliversOnTheMainQueue() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try await todos.upsert(["id": "a", "views": 1])
    let seen = Mutex<[(views: JSONValue?, onMain: Bool)]>([])
    let live = try todos.findByID("a").observeLocal { document, _ in
      seen.withLock { $0.append((document?["views"], Self.onMainQueue)) }
    }
    let query = Mutex<[Bool]>([])
    let liveQuery = try todos.query().observeLocal { _, _ in query.withLock { $0.append(Self.onMainQueue) } }
    try await todos.findByID("a").update { d in d?["views"].increment(by: 1) }
    try await waitUntil { seen.withLock { $0.count } == 2 && query.withLock { $0.count } == 2 }
    #expect(seen.withLock { $0.map(\.views) } == [1, 2])
    #expect(seen.withLock { $0.allSatisfy(\.onMain) })
    #expect(query.withLock { $0 } == [true, true])
    live.stop()
    liveQuery.stop()
  }

  /// A model isolated to the main actor, as a SwiftUI view model is.
  @MainActor final class TodoModel {
    var titles: [String] = []
    var counts: [Int] = []
    var openConflicts: [Int] = []
  }

  /// The default-queue forms take a `@MainActor` handler: it updates the
  /// model directly (this would not compile with a plain `@Sendable` one)
  /// and runs isolated to the main actor.
  @Test func handlerUpdatesAMainActorModelDirectly() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try await todos.upsert(["id": "a", "title": "milk"])
    let model = TodoModel()
    let live = try todos.findByID("a").observeLocal { document, _ in
      MainActor.preconditionIsolated()
      model.titles.append(document?["title"]?.stringValue ?? "none")
    }
    let query = try todos.query().observeLocal { documents, _ in model.counts.append(documents.count) }
    let conflicts = try store.observeConflicts { list, _ in
      MainActor.preconditionIsolated()
      model.openConflicts.append(list.count)
    }
    try await todos.upsert(["id": "b", "title": "bread"])
    try await todos.findByID("a").update { d in d?["title"] = "oat milk" }
    try await waitUntil { model.titles.count == 2 && model.counts.count == 3 && model.openConflicts == [0] }
    #expect(model.titles == ["milk", "oat milk"])
    #expect(model.counts == [1, 2, 2])
    live.stop()
    query.stop()
    conflicts.stop()
  }

  @Test func deliverOnOverridesTheMainQueue() async throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let onMain = Mutex<[Bool]>([])
    let live = try store.collection("todos").findByID("a").observeLocal(
      deliverOn: DispatchQueue(label: "own")
    ) {
      _, _ in onMain.withLock { $0.append(Self.onMainQueue) }
    }
    try await waitUntil { onMain.withLock { $0.count } == 1 }
    #expect(onMain.withLock { $0 } == [false])
    live.stop()
  }
}
