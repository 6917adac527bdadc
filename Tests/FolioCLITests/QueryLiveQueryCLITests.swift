import Folio
import FolioTestSupport
import Foundation
import Testing

/// A query live query in this process sees `folio` commands run as child
/// processes move documents into and out of its window.
struct QueryLiveQueryCLITests {
  /// Collects events from a handler; a test waits on it.
  final class Events<T: Sendable>: @unchecked Sendable {
    // @unchecked: `items` is guarded by `condition`.
    private let condition = NSCondition()
    private var items: [T] = []

    func append(_ item: T) {
      condition.lock()
      items.append(item)
      condition.broadcast()
      condition.unlock()
    }

    /// The items so far, once there are at least `count` (or after
    /// `stateTimeout`).
    func wait(for count: Int) -> [T] {
      let deadline = Date().addingTimeInterval(stateTimeout)
      condition.lock()
      defer { condition.unlock() }
      while items.count < count, condition.wait(until: deadline) {}
      return items
    }
  }

  /// "[pks] | kind key<prevKey, …", as the library tests write them.
  static func describe(_ documents: [Document], _ event: LiveQueryEvent) -> String {
    let pks = documents.map(\.pk).joined(separator: ",")
    guard case .update(let update) = event else { return "initial [\(pks)]" }
    let children = update.childEvents.map {
      "\($0.kind.rawValue.dropFirst(6)) \($0.key)<\($0.prevKey ?? "-")"
    }
    return "[\(pks)] | " + children.joined(separator: ", ")
  }

  @Test func aWindowSeesChildProcessesMoveDocumentsIn() throws {
    let scratch = try CLIScratch(yaml: CLIScratch.yamlWithNotes)
    defer { scratch.remove() }
    try scratch.folio("init")
    let store = try Store(at: URL(fileURLWithPath: scratch.path))
    try store.write { tx in
      for (i, pk) in ["a", "b", "c", "d", "e"].enumerated() {
        try tx.apply(table: "todos", pk: pk, op: .insert, columns: ["lastUpdate": .integer(i + 1)])
      }
    }
    let query = try store.collection("todos").query().orderBy(child: "lastUpdate").limitToFirst(3)
    let events = Events<String>()
    let live = try query.observeLocal { documents, event in events.append(Self.describe(documents, event)) }
    defer { live.stop() }
    let added = Events<String>()
    let liveAdded = try query.observeLocal(.childAdded) { document, prevKey in
      added.append("\(document.pk)<\(prevKey ?? "-")")
    }
    defer { liveAdded.stop() }
    #expect(events.wait(for: 1) == ["initial [a,b,c]"])
    let fence = try LiveQueryFence(store: store)
    defer { fence.stop() }

    // Each command is another process; each is one transaction, so one event.
    let moved = try scratch.folio("apply", "todos", "e", "--op", "update", "--columns", #"{"lastUpdate": 0}"#)
    #expect(moved.status == 0, "\(moved.stderr)")
    #expect(events.wait(for: 2).count == 2)
    let put = try scratch.folio("put", "todos", "f", input: #"{"lastUpdate": 1.5}"#)
    #expect(put.status == 0, "\(put.stderr)")
    #expect(events.wait(for: 3).count == 3)
    let outside = try scratch.folio("apply", "todos", "d", "--op", "update", "--columns", #"{"title": "x"}"#)
    #expect(outside.status == 0, "\(outside.stderr)")
    let inside = try scratch.folio("apply", "todos", "a", "--op", "update", "--columns", #"{"title": "far"}"#)
    #expect(inside.status == 0, "\(inside.stderr)")
    let removed = try scratch.folio("rm", "todos", "e")
    #expect(removed.status == 0, "\(removed.stderr)")

    let expected = [
      "initial [a,b,c]",
      "[e,a,b] | removed c<b, added e<-",  // e moves in first; c drops out
      "[e,a,f] | removed b<a, added f<a",  // f (1.5) comes in after a
      // d changed outside the window: nothing.
      "[e,a,f] | changed a<e",
      "[a,f,b] | removed e<-, added b<f",  // e goes: b slides back in
    ]
    #expect(events.wait(for: expected.count) == expected)
    #expect(added.wait(for: 6) == ["a<-", "b<a", "c<b", "e<-", "f<a", "b<f"])
    // An event too many for a command would come before the fence's.
    #expect(try fence.pass())
    #expect(events.wait(for: expected.count) == expected)
    #expect(added.wait(for: 6).count == 6)
  }
}
