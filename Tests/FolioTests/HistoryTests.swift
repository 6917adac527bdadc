import Folio
import FolioTestSupport
import Foundation
import Testing

/// The history API: ``Store/diff(from:to:tables:)`` and
/// ``Store/snapshot(asOf:)``, as the Swift API gives them.
@Suite struct HistoryTests {
  static let yaml = SyncTests.yaml

  @Test func diffAndSnapshotReadPastCommits() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "x", "views": 2, "tags": ["p"]])
    try store.commit(message: "one")
    try store.apply(
      table: "todos", pk: "a", op: .update, columns: ["title": "y"],
      transforms: ["views": ["op": "increment", "by": 5], "tags": ["op": "arrayRemove", "values": ["p"]]])
    try store.apply(table: "todos", pk: "b", op: .insert, columns: ["title": "b"])
    try store.commit(message: "two")

    let diff = try store.diff(from: "HEAD~1", to: "HEAD")
    #expect(diff.problems.isEmpty)
    let views = try #require(diff.changes.first { $0.path == "/views" })
    #expect(views.delta == DecimalInteger(5) && views.old == 2 && views.new == 7)
    let tags = try #require(diff.changes.first { $0.path == "/tags" })
    #expect(tags.membersRemoved == ["p"] && tags.membersAdded == [])
    #expect(diff.changes.contains { $0.pk == "b" && $0.change == .added && $0.path.isEmpty })
    let stat = try #require(diff.stats.first)
    #expect(diff.stats.count == 1)
    #expect(
      stat.table == "todos" && stat.added == 1 && stat.removed == 0 && stat.changed == 1 && stat.paths == 3)
    #expect(try store.diff().changes.isEmpty)

    let past = try store.snapshot(asOf: "HEAD~1")
    #expect(past.commit.summary == "one")
    #expect(past.commit.id.count == 40)
    #expect(try past.findByID(table: "todos", pk: "a")?.value["title"] == "x")
    #expect(try past.findByID(table: "todos", pk: "b") == nil)
    #expect(try past.pks(table: "todos") == ["a"])
    let now = try store.snapshot(asOf: "HEAD")
    let query = try store.collection("todos").query().orderBy(child: "title").limitToFirst(1)
    #expect(try now.get(query).map(\.pk) == ["b"])
    #expect(try now.get(store.collection("todos").query().where("views > 3")).map(\.pk) == ["a"])
    #expect(throws: FolioError.self) { try store.snapshot(asOf: "no-such-branch") }
  }
}
