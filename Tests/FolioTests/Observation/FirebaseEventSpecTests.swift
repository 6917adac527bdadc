import Folio
import FolioJSON
import FolioQuery
import FolioTestSupport
import Foundation
import Testing

/// Child events as Firebase raises them, from the cross-SDK event spec
/// (firebase-js-sdk `packages/database/test/helpers/syncPointSpec.json`,
/// cases named by index) and `core/view/EventGenerator.ts` (issue 13):
/// removed, added, moved, changed; `child_moved` for every changed child
/// whose order value changed and that stays in view, with its new prevKey,
/// even when its place does not change; no event for a rewrite that leaves
/// every value equal.
///
/// Each spec case becomes documents of one table and one query; each step
/// is one transaction. Folio gives `child_removed` a prevKey too (the one
/// before it in the old results), where Firebase gives none; the spec's
/// removals are written here with Folio's value.
struct FirebaseEventSpecTests {
  /// One transaction: pk → columns to set (upsert), or nil to remove.
  struct Step: Sendable {
    var writes: [(pk: String, columns: JSONObject?)]
    /// "kind key<prevKey", "-" for none.
    var events: [String]
  }

  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    var documents: [(pk: String, columns: JSONObject)]
    var query: @Sendable (Query) throws -> Query
    var initial: [String]
    var steps: [Step] = []
    var testDescription: String { name }
  }

  static func doc(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONObject {
    JSONObject(pairs.map { ($0.key, $0.value) })
  }

  static let cases: [Case] = [
    Case(
      name: "issue 13: a changed order value raises child_moved even in place; equal values raise nothing",
      documents: [("a", doc(["value": 1])), ("b", doc(["value": 2])), ("c", doc(["value": 3]))],
      query: { try $0.orderBy(child: "value") }, initial: ["a", "b", "c"],
      steps: [
        Step(writes: [("a", doc(["value": .number("2.5")]))], events: ["moved a<b", "changed a<b"]),
        Step(writes: [("a", doc(["value": .number("2.7")]))], events: ["moved a<b", "changed a<b"]),
        // 2.7 written as 2.70, and 3 as 3.0: equal values (Firebase compares
        // values; Folio's exact numbers agree that these are equal).
        Step(writes: [("a", doc(["value": .number("2.70")]))], events: []),
        Step(writes: [("c", doc(["value": .number("3.0")]))], events: []),
        // A change that leaves the order value alone: child_changed only.
        Step(writes: [("a", doc(["title": "x"]))], events: ["changed a<b"]),
        Step(writes: [("a", doc(["value": 0]))], events: ["moved a<-", "changed a<-"]),
      ]),
    Case(
      name: "spec 30: a value moving a child out of a limitToLast window",
      documents: [("c", doc(["value": 3])), ("d", doc(["value": 4]))],
      query: { try $0.orderBy(child: "value").limitToLast(1) }, initial: ["d"],
      steps: [
        Step(writes: [("d", doc(["value": 5]))], events: ["moved d<-", "changed d<-"]),
        Step(writes: [("d", doc(["value": 2]))], events: ["removed d<-", "added c<-"]),
      ]),
    Case(
      name: "spec 57: update indexed value on existing child from limited query",
      documents: [
        ("4", doc(["age": 41, "highscore": 400, "name": "old mama"])),
        ("5", doc(["age": 18, "highscore": 1200, "name": "young mama"])),
        ("6", doc(["age": 20, "highscore": 1003, "name": "michael blub"])),
        ("7", doc(["age": 30, "highscore": 10000, "name": "no. 7"])),
      ],
      query: { try $0.orderBy(child: "age").limitToLast(4) }, initial: ["5", "6", "7", "4"],
      steps: [Step(writes: [("4", doc(["age": 25]))], events: ["moved 4<6", "changed 4<6"])]),
    Case(
      name: "spec 76: user write with deep user overwrite",
      documents: [("a", doc(["value": 1])), ("b", doc(["value": 5])), ("c", doc(["value": 10]))],
      query: { try $0.orderBy(child: "value") }, initial: ["a", "b", "c"],
      steps: [Step(writes: [("c", doc(["value": 3]))], events: ["moved c<a", "changed c<a"])]),
    Case(
      name: "spec 26/27: a child deleted from a limit window pulls in a new child",
      documents: [("a", doc(["aa": 2])), ("b", doc(["bb": 2])), ("c", doc(["cc": 2]))],
      query: { try $0.orderByKey().limitToLast(2) }, initial: ["b", "c"],
      steps: [Step(writes: [("b", nil)], events: ["removed b<-", "added a<-"])]),
    Case(
      name: "spec 33/35: a limit is refilled after a delete",
      documents: [("c", doc(["v": 3])), ("d", doc(["v": 4]))],
      query: { try $0.orderByKey().limitToLast(1) }, initial: ["d"],
      steps: [Step(writes: [("d", nil)], events: ["removed d<-", "added c<-"])]),
    Case(
      name: "spec 55: limitToFirst(1) on an ordered query",
      documents: [
        ("triceratops", doc(["vanished": -66_000_000])), ("stegosaurus", doc(["vanished": -155_000_000])),
        ("pterodactyl", doc(["vanished": -75_000_000])),
      ],
      query: { try $0.orderBy(child: "vanished").limitToFirst(1) }, initial: ["stegosaurus"]),
    Case(
      name: "spec 56: limitToLast(1) on an ordered query",
      documents: [
        ("triceratops", doc(["vanished": -66_000_000])), ("stegosaurus", doc(["vanished": -155_000_000])),
        ("pterodactyl", doc(["vanished": -75_000_000])),
      ],
      query: { try $0.orderBy(child: "vanished").limitToLast(1) }, initial: ["triceratops"]),
    Case(
      name: "spec 58: startAt(true)",
      documents: [("x", doc(["boolKey": false])), ("y", doc(["boolKey": true])), ("z", doc(["n": 1]))],
      query: { try $0.orderBy(child: "boolKey").startAt(true) }, initial: ["y"]),
    Case(
      name: "spec 58: endAt(true)",
      documents: [("x", doc(["boolKey": false])), ("y", doc(["boolKey": true])), ("z", doc(["n": 1]))],
      query: { try $0.orderBy(child: "boolKey").endAt(true) }, initial: ["z", "x", "y"]),
    Case(
      name: "spec 58: equalTo(true)",
      documents: [("x", doc(["boolKey": false])), ("y", doc(["boolKey": true])), ("z", doc(["n": 1]))],
      query: { try $0.orderBy(child: "boolKey").equalTo(true) }, initial: ["y"]),
    Case(
      name: "spec 61: a limit with a custom orderBy is refilled with the correct item",
      documents: [
        ("a", doc(["age": 4])), ("b", doc(["age": 3])), ("c", doc(["age": 2])), ("d", doc(["age": 1])),
      ],
      query: { try $0.orderBy(child: "age").limitToLast(1) }, initial: ["a"],
      steps: [Step(writes: [("a", nil)], events: ["removed a<-", "added b<-"])]),
    Case(
      name: "spec 62: startAt/endAt dominates limit",
      documents: [("a", doc(["index": 1, "value": "a"])), ("b", doc(["index": 1000, "value": "b"]))],
      query: { try $0.orderBy(child: "index").startAt(1).endAt(2).limitToFirst(2) }, initial: ["a"],
      steps: [
        Step(
          writes: [("b", doc(["index": 1, "value": "b"])), ("c", doc(["index": 2, "value": "c"]))],
          events: ["added b<a"]),
        Step(writes: [("a", doc(["index": 1000]))], events: ["removed a<-", "added c<b"]),
        Step(writes: [("b", doc(["index": 1000]))], events: ["removed b<-"]),
      ]),
    Case(
      name: "spec 63: startAfter and endBefore",
      documents: [
        ("a", doc(["index": 0])), ("b", doc(["index": 2])), ("c", doc(["index": 9])),
        ("d", doc(["index": 11])),
      ],
      query: { try $0.orderBy(child: "index").startAfter(1).endBefore(10) }, initial: ["b", "c"],
      steps: [
        Step(writes: [("c", doc(["index": 10]))], events: ["removed c<b"]),
        Step(writes: [("b", doc(["index": 1]))], events: ["removed b<-"]),
      ]),
    Case(
      name: "spec 64: startAfter, endBefore and orderByChild with a Firebase path",
      documents: [
        ("a", doc(["foo": ["index": 0, "value": "a"]])), ("b", doc(["foo": ["index": 2, "value": "b"]])),
        ("c", doc(["foo": ["index": 9, "value": "c"]])), ("d", doc(["foo": ["index": 11, "value": "d"]])),
      ],
      query: { try $0.orderBy(child: "foo/index").startAfter(1, key: "foo").endBefore(10, key: "foo") },
      initial: ["b", "c"]),
    Case(
      name: "spec 65: orderByKey with startAfter, endBefore and limitToFirst",
      documents: [
        ("a", doc(["v": "a"])), ("b", doc(["v": "b"])), ("c", doc(["v": "c"])), ("d", doc(["v": "d"])),
      ],
      query: { try $0.orderByKey().startAfter("a").endBefore("d").limitToFirst(1) }, initial: ["b"]),
    Case(
      name: "spec 66: orderByKey with startAfter, endBefore and limitToLast",
      documents: [
        ("a", doc(["v": "a"])), ("b", doc(["v": "b"])), ("c", doc(["v": "c"])), ("d", doc(["v": "d"])),
        ("e", doc(["v": "e"])),
      ],
      query: { try $0.orderByKey().startAfter("a").endBefore("e").limitToLast(2) }, initial: ["c", "d"]),
    Case(
      name: "spec 67: an update to a single child that moves out of the window",
      documents: [("a", doc(["index": 1])), ("b", doc(["index": 2])), ("c", doc(["index": 3]))],
      query: { try $0.orderBy(child: "index").startAt(1).endAt(10).limitToFirst(2) }, initial: ["a", "b"],
      steps: [
        Step(writes: [("a", doc(["index": -1]))], events: ["removed a<-", "added c<b"]),
        Step(writes: [("b", doc(["index": -1]))], events: ["removed b<-"]),
      ]),
    Case(
      name: "spec 68: a limited query does not pull in an out-of-range child",
      documents: [("a", doc(["index": 1])), ("b", doc(["index": 2])), ("c", doc(["index": 1000]))],
      query: { try $0.orderBy(child: "index").startAt(1).endAt(10).limitToFirst(2) }, initial: ["a", "b"],
      steps: [Step(writes: [("a", doc(["index": -1]))], events: ["removed a<-"])]),
    Case(
      name: "spec 72: equalTo(null)",
      documents: [
        ("a", doc(["value": "a"])), ("b", doc(["value": "b"])), ("c", doc(["value": "c", "index": 1])),
      ],
      query: { try $0.orderBy(child: "index").startAt(.null).endAt(.null) }, initial: ["a", "b"],
      steps: [
        Step(writes: [("c", doc(["index": .null]))], events: ["added c<b"]),
        Step(writes: [("c", doc(["index": 1]))], events: ["removed c<b"]),
      ]),
    Case(
      name: "spec 100: a merge that moves a child from the window to the boundary does not re-add it",
      documents: [("2-a", doc(["index": 10])), ("1-b", doc(["index": 20]))],
      query: { try $0.orderBy(child: "index").startAt(1).limitToFirst(2) }, initial: ["2-a", "1-b"],
      steps: [
        Step(
          writes: [
            ("1-b", doc(["index": 0])), ("2-a", doc(["index": 30])), ("3-c", doc(["index": 5])),
            ("4-d", doc(["index": 6])),
          ],
          events: ["removed 2-a<-", "removed 1-b<2-a", "added 3-c<-", "added 4-d<3-c"])
      ]),
  ]

  static func describe(_ child: ChildEvent) -> String {
    "\(child.kind.rawValue.dropFirst(6)) \(child.key)<\(child.prevKey ?? "-")"
  }

  @Test(arguments: cases) func eventsMatchFirebase(_ spec: Case) throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { tx in
      for (pk, columns) in spec.documents {
        try tx.apply(table: "notes", pk: pk, op: .insert, columns: columns)
      }
    }
    let query = try spec.query(store.collection("notes").query())
    let recorder = EventRecorder<[String]>()
    let live = try query.observeLocal { documents, event in
      switch event {
      case .initial: recorder.append(["initial"] + documents.map(\.pk))
      case .update(let update): recorder.append(update.childEvents.map(Self.describe))
      }
    }
    defer { live.stop() }
    // The spec's queries are on notes: the fence is in todos.
    let fence = try LiveQueryFence(store: store, table: "todos")
    defer { fence.stop() }
    // The one-shot query agrees with the live one's start.
    #expect(try query.get().map(\.pk) == spec.initial, "\(spec.name)")
    for step in spec.steps {
      try store.write { tx in
        for (pk, columns) in step.writes {
          if let columns {
            try tx.apply(table: "notes", pk: pk, op: .upsert, columns: columns)
          } else {
            try tx.apply(table: "notes", pk: pk, op: .remove)
          }
        }
      }
    }
    let expected = [["initial"] + spec.initial] + spec.steps.map(\.events).filter { !$0.isEmpty }
    recorder.wait(for: expected.count)
    // Nothing more arrives: an event too many would come before the fence's.
    #expect(try fence.pass())
    #expect(recorder.all == expected, "\(spec.name)")
  }
}
