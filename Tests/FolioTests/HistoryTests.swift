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

  /// An imported document is blamed on the import, and ops after it on
  /// themselves.
  @Test func blameOfAnImportAndWhatFollowedIt() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try scratch.write("rows.ndjson", #"{"id":"a","title":"x","views":4,"tags":["p"]}"# + "\n")
    try store.importRows(into: "todos", options: ImportOptions(path: scratch.path + "/rows.ndjson"))
    try store.apply(
      table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 3]])
    try store.commit(message: "more")
    let blame = try store.blame(table: "todos", pk: "a")
    let title = try #require(blame.fields.first { $0.path == "/title" })
    #expect(title.source.kind == .import && title.source.commit != nil, "\(title)")
    let views = try #require(blame.fields.first { $0.path == "/views" })
    #expect(views.value == 7 && views.source.kind == .increment && views.source.by == DecimalInteger(3))
    #expect(views.assignment?.kind == .import, "the 4 it counts from came with the import")
    #expect(views.increments?.map(\.commit?.summary) == ["more"])
    let tags = try #require(blame.fields.first { $0.path == "/tags" })
    #expect(tags.members?.map(\.source.kind) == [.import])
    #expect(try store.blame(table: "todos", pk: "nosuch").fields.isEmpty)
  }

  /// After `folio compact` rewrote the logs, the ops still held are found
  /// in the commits that brought them, and the values from before them are
  /// blamed on the commits that made them.
  @Test func blameAfterCompactionFindsTheCommitsOfTheOpsLeft() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "x", "views": 1])
    try store.commit(message: "one")
    // A branch that has not seen what follows keeps those ops in the log.
    #expect(try shellGit("branch old", in: scratch.path).status == 0)
    try store.apply(
      table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    try store.commit(message: "two")
    try store.apply(
      table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 3]])
    try store.commit(message: "three")
    let summary = try store.compact()
    #expect(summary.droppedOps == 1 && summary.keptOps == 2, "\(summary)")

    let blame = try store.blame(table: "todos", pk: "a")
    let views = try #require(blame.fields.first { $0.path == "/views" })
    #expect(views.value == 6)
    #expect(views.increments?.map(\.commit?.summary) == ["two", "three"], "\(views)")
    let title = try #require(blame.fields.first { $0.path == "/title" })
    #expect(title.source.kind == .edit && title.source.commit?.summary == "one", "\(title)")
  }

  /// Blame remembers which committed log the working log extends, and
  /// checks again, in full, a log rewritten in place since: an op edited
  /// by hand is not blamed on the commit that held the original.
  @Test func aLogRewrittenSinceBlameLastCheckedItIsCheckedAgain() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "x", "views": 1])
    try store.commit(message: "one")
    try store.apply(
      table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    try store.commit(message: "two")
    let first = try store.blame(table: "todos", pk: "a")
    let cache = scratch.path + "/.git/folio/log-prefixes"
    #expect(FileManager.default.fileExists(atPath: cache))
    let views = try #require(first.fields.first { $0.path == "/views" })
    #expect(views.increments?.map(\.commit?.summary) == ["two"], "\(views)")
    #expect(try store.blame(table: "todos", pk: "a").fields == first.fields)

    // The same length, other bytes, HEAD unchanged.
    let logs = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/.folio/ops")
    let log = scratch.path + "/.folio/ops/" + (try #require(logs.first))
    let text = try String(contentsOfFile: log, encoding: .utf8)
    #expect(text.contains(#""by":2"#))
    try text.replacingOccurrences(of: #""by":2"#, with: #""by":5"#).write(
      toFile: log, atomically: false, encoding: .utf8)
    let edited = try store.blame(table: "todos", pk: "a")
    let increment = try #require(edited.fields.first { $0.path == "/views" }?.increments?.first)
    #expect(increment.by == DecimalInteger(5) && increment.commit == nil, "\(increment)")
    try FileManager.default.removeItem(atPath: cache)
    #expect(try store.blame(table: "todos", pk: "a").fields == edited.fields)
  }

  @Test func historyListsEachVersionNewestFirst() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "x"])
    try store.commit(message: "one")
    try store.apply(table: "todos", pk: "b", op: .insert, columns: ["title": "b"])
    try store.commit(message: "other")
    try store.apply(table: "todos", pk: "a", op: .update, columns: ["title": "y"])
    try store.commit(message: "two")
    try store.apply(table: "todos", pk: "a", op: .remove)
    try store.commit(message: "gone")
    let versions = try store.history(table: "todos", pk: "a")
    #expect(versions.map(\.commit.summary) == ["gone", "two", "one"])
    #expect(versions.map { $0.document?.value["title"] } == [nil, "y", "x"])
    #expect(versions[1].changes.map(\.path) == ["/title"])
    #expect(versions[0].changes.map(\.change) == [.removed])
    #expect(try store.history(table: "todos", pk: "nosuch").isEmpty)
    #expect(throws: FolioError.self) { try store.history(table: "nosuch", pk: "a") }
  }

  /// A long log is scanned in parts at once: the ops, their order and a
  /// bad line's number are the same as one scan gives.
  @Test func aLongLogReadsInPartsWithTheRightLineNumbers() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    var text = ""
    for n in 0..<50_000 {
      let pk = n % 1000 == 7 ? "hot" : "d\(n)"
      text +=
        #"{"hlc":"\#(1_796_000_000_000 + n)-0000-logger","op":"update","pk":"\#(pk)","set":{"n":\#(n)},"table":"todos"}"#
      text += "\n"
    }
    #expect(text.utf8.count > 4 << 20, "long enough to be scanned in parts")
    try scratch.write(".folio/ops/logger.ndjson", text)
    let all = try store.ops()
    #expect(all.count == 50_000)
    let inOrder = all.map { $0.mutation.assignments[0].value } == (0..<50_000).map { .number("\($0)") }
    #expect(inOrder, "every op, in the file's order")
    #expect(try store.ops(table: "todos", pk: "hot").count == 50)
    // The bad line in the last part, so its number counts the parts before.
    try scratch.write(".folio/ops/logger.ndjson", text + text + "{\"hlc\":\n")
    #expect {
      _ = try store.ops(table: "todos", pk: "hot")
    } throws: { error in
      let location = (error as? FolioError)?.location
      return location?.file == ".folio/ops/logger.ndjson" && location?.line == 100_001
    }
  }
}
