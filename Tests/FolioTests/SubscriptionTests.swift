import Folio
import FolioGit
import FolioQuery
import FolioTestSupport
import Foundation
import Testing

/// The store's list of live subscriptions (seed `000_*` `subscribe`).
struct SubscriptionTests {
  static func describe(_ target: SubscriptionTarget) -> String {
    switch target {
    case .document(let table, let pk): "\(table)/\(pk)"
    case .query(let query): "query on \(query.collection.name)"
    }
  }

  @Test func storeListsLiveSubscriptionsUntilCancelledOrReleased() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    #expect(store.activeSubscriptions.isEmpty)
    let todos = store.collection("todos")
    let one = try todos.findByID("a").subscribe()
    var query: Subscription? = try todos.query().where(Predicate(parsing: "done == false")).subscribe()
    let note = try store.collection("notes").findByID("n").subscribe()
    #expect(store.activeSubscriptions.map(Self.describe) == ["todos/a", "query on todos", "notes/n"])
    #expect(store.activeSubscriptions.map(\.table) == ["todos", "todos", "notes"])
    #expect(Self.describe(one.target) == "todos/a")
    one.cancel()
    one.cancel()  // twice is fine
    #expect(store.activeSubscriptions.map(Self.describe) == ["query on todos", "notes/n"])
    #expect(query != nil)
    query = nil  // releasing ends it too
    #expect(store.activeSubscriptions.map(Self.describe) == ["notes/n"])
    withExtendedLifetime(note) {}
  }
}
