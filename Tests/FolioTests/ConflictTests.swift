import Folio
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore
@testable import FolioGit

/// `folio conflicts` in the library: the resolver's overwrites, records made
/// by `sync` on two and three replicas, and resolution.
@Suite struct ConflictTests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: todos
        columns:
          views: counter
          tags: set
    """

  // MARK: the resolver

  func stamp(_ wall: Int64, _ replica: String) -> HLC { HLC(wall: wall, counter: 0, replica: replica) }

  func update(
    _ wall: Int64, _ replica: String, _ assignments: [(String, JSONValue?)],
    transforms: [Mutation.TransformEntry] = []
  ) -> Op {
    Op(
      hlc: stamp(wall, replica), table: "todos", pk: "a",
      mutation: Mutation(
        kind: .update, assignments: assignments.map { .init(path: FieldPath($0.0), value: $0.1) },
        transforms: transforms))
  }

  func resolve(base: JSONObject, ours: [Op], theirs: [Op]) throws -> (
    JSONObject?, [DocumentResolver.Overwrite]
  ) {
    let config = try Config(yaml: Self.yaml)
    let resolver = DocumentResolver(table: try #require(config.table(named: "todos")))
    func side(_ ops: [Op]) -> DocumentResolver.Side {
      let document = resolver.replay(ops, onto: base, pk: "a")
      return .init(document: document, ops: ops, syntheticStamp: stamp(1, "~x"))
    }
    return resolver.resolveRecording(pk: "a", base: base, ours: side(ours), theirs: side(theirs))
  }

  @Test func concurrentAssignmentsRecordTheLoser() throws {
    let (document, overwrites) = try resolve(
      base: ["id": "a", "title": "start"], ours: [update(10, "A", [("title", "mine")])],
      theirs: [update(20, "B", [("title", "theirs")])])
    #expect(document?["title"] == "theirs")
    #expect(
      overwrites == [
        .init(
          path: "title", loser: stamp(10, "A"), losingValue: "mine", winner: stamp(20, "B"),
          winningValue: "theirs")
      ])
  }

  @Test func sequentialCountersSetsAndEqualValuesRecordNothing() throws {
    // Same side: the replica saw its own earlier write.
    #expect(
      try resolve(
        base: ["id": "a"], ours: [update(10, "A", [("title", "x")]), update(30, "A", [("title", "y")])],
        theirs: [update(20, "B", [("note", "n")])]
      ).1.isEmpty)
    // Counter and set columns, even assigned outright, merge without loss.
    #expect(
      try resolve(
        base: ["id": "a"], ours: [update(10, "A", [("views", 1), ("tags", ["x"])])],
        theirs: [update(20, "B", [("views", 5), ("tags", ["y"])])]
      ).1.isEmpty)
    // Both chose the same value: nothing is lost.
    #expect(
      try resolve(
        base: ["id": "a"], ours: [update(10, "A", [("title", "same")])],
        theirs: [update(20, "B", [("title", "same")])]
      ).1.isEmpty)
  }

  @Test func removeBeatsUpdateWithoutARecord() throws {
    let remove = Op(hlc: stamp(20, "B"), table: "todos", pk: "a", mutation: Mutation(kind: .remove))
    let (document, overwrites) = try resolve(
      base: ["id": "a", "title": "t"], ours: [update(10, "A", [("title", "mine")])], theirs: [remove])
    #expect(document == nil)
    #expect(overwrites.isEmpty)
    let (after, late) = try resolve(
      base: ["id": "a", "title": "t"], ours: [update(30, "A", [("title", "late")])], theirs: [remove])
    #expect(after == nil)
    #expect(late.isEmpty)
  }

  @Test func nestedPathsRecordTheDeeperPath() throws {
    let (_, overwrites) = try resolve(
      base: ["id": "a"], ours: [update(10, "A", [("meta.k", 1)])],
      theirs: [update(20, "B", [("meta", ["other": 2])])])
    #expect(
      overwrites == [
        .init(
          path: "meta.k", loser: stamp(10, "A"), losingValue: 1, winner: stamp(20, "B"), winningValue: nil)
      ])
  }

  @Test func everyConcurrentPairIsRecorded() throws {
    // A (10) and C (30) on one side, B (20) on the other: A and C are
    // sequential, B is concurrent with both.
    let (_, overwrites) = try resolve(
      base: ["id": "a"], ours: [update(10, "A", [("title", "a")]), update(30, "A", [("title", "c")])],
      theirs: [update(20, "B", [("title", "b")])])
    #expect(
      Set(overwrites) == [
        .init(
          path: "title", loser: stamp(10, "A"), losingValue: "a", winner: stamp(20, "B"), winningValue: "b"),
        .init(
          path: "title", loser: stamp(20, "B"), losingValue: "b", winner: stamp(30, "A"), winningValue: "c"),
      ])
  }

  @Test func aRemoveBetweenTwoConcurrentAssignmentsStillRecordsThePair() throws {
    // A (10) and C (30) are concurrent assignments; B's remove (20) lies
    // between them and makes C an update of nothing. A replica that merges
    // A and C before B arrives records the pair, so every merge must: the
    // record is settled by the remove when listed, not left unwritten.
    let remove = Op(hlc: stamp(20, "B"), table: "todos", pk: "a", mutation: Mutation(kind: .remove))
    let (document, overwrites) = try resolve(
      base: ["id": "a", "title": "t"], ours: [update(10, "A", [("title", "a")])],
      theirs: [remove, update(30, "C", [("title", "c")])])
    #expect(document == nil)
    #expect(
      overwrites == [
        .init(
          path: "title", loser: stamp(10, "A"), losingValue: "a", winner: stamp(30, "C"), winningValue: "c")
      ])
  }

  // MARK: replicas through sync

  static func conflictKeys(_ store: Store) throws -> [String] {
    try store.conflicts().map {
      "\($0.table)/\($0.pk)/\($0.path)/\($0.losingValue.compactString)->\($0.winningValue?.compactString ?? "-")"
    }
  }

  static func recordFiles(_ store: Store) throws -> [String] {
    (try FileSystem.list(store.rootPath + "/" + Conflict.folder) ?? []).sorted()
  }

  @Test func twoReplicasListTheSameConflictAndResolutionClosesItEverywhere() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let r0 = try fixture.seed(yaml: Self.yaml)
    try r0.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "start", "views": 0])
    try r0.sync()
    let r1 = try fixture.clone("r1")
    try r0.apply(
      table: "todos", pk: "a", op: .update, columns: ["title": "from r0"],
      transforms: ["views": ["op": "increment", "by": 1]])
    try r1.apply(
      table: "todos", pk: "a", op: .update, columns: ["title": "from r1"],
      transforms: ["views": ["op": "increment", "by": 2]])
    try r0.sync()
    try r1.sync()
    try r0.sync()
    let winner = try #require(try r0.collection("todos").findByID("a").exec()).value["title"]
    #expect(winner == "from r1")  // r1 wrote later
    #expect(try Self.conflictKeys(r0) == [#"todos/a/title/"from r0"->"from r1""#])
    #expect(try Self.conflictKeys(r1) == Self.conflictKeys(r0))
    #expect(try Self.recordFiles(r1) == Self.recordFiles(r0))
    #expect(try r0.collection("todos").conflicts().count == 1)
    let conflict = try #require(try r1.conflicts().first)
    #expect(conflict.losingReplica == r0.replicaID && conflict.winningReplica == r1.replicaID)

    try r1.resolveConflict(table: "todos", pk: "a", path: "title", .takeOther)
    #expect(try r1.conflicts().isEmpty)
    #expect(try r0.conflicts().count == 1)
    try r1.sync()
    try r0.sync()
    #expect(try r0.conflicts().isEmpty)
    #expect(try r0.collection("todos").findByID("a").exec()?.value["title"] == "from r0")
    #expect(throws: FolioError.self) {
      try r0.resolveConflict(table: "todos", pk: "a", path: "title", .keep)
    }
  }

  @Test func threeReplicasAgreeWhateverTheOrder() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let r0 = try fixture.seed(yaml: Self.yaml)
    try r0.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "start"])
    try r0.sync()
    let r1 = try fixture.clone("r1")
    let r2 = try fixture.clone("r2")
    for (i, replica) in [r0, r1, r2].enumerated() {
      try replica.apply(table: "todos", pk: "a", op: .update, columns: ["title": .string("v\(i)")])
      waitForNextMillisecond()  // each replica's assignment is later than the one before
    }
    // r2 merges r1 directly first, then everyone goes through the remote.
    try git(["remote", "add", "r1", "file://" + r1.rootPath], in: r2.rootPath)
    try r1.commit()
    try r2.sync(remote: "r1", push: false)
    for replica in [r0, r2, r1, r0, r2] { try replica.sync() }
    let lists = try [r0, r1, r2].map(Self.conflictKeys)
    #expect(lists[0] == [#"todos/a/title/"v0"->"v2""#, #"todos/a/title/"v1"->"v2""#])
    #expect(lists[1] == lists[0] && lists[2] == lists[0])
    #expect(try Self.recordFiles(r1) == Self.recordFiles(r0))
    #expect(try Self.recordFiles(r2) == Self.recordFiles(r0))

    // A later plain assignment closes them too.
    try r1.apply(table: "todos", pk: "a", op: .update, columns: ["title": "settled"])
    for replica in [r1, r0, r2] { try replica.sync() }
    #expect(try [r0, r1, r2].allSatisfy { try $0.conflicts().isEmpty })
  }

  @Test func recordsDoNotDependOnWhetherARemoveArrivedBeforeThePair() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let r0 = try fixture.seed(yaml: Self.yaml)
    try r0.apply(table: "todos", pk: "a", op: .insert, columns: ["title": "start"])
    try r0.sync()
    let r1 = try fixture.clone("r1")
    let r2 = try fixture.clone("r2")
    // Three concurrent ops, in this stamp order: r0 sets the title, r1
    // removes the document, r2 sets the title.
    try r0.apply(table: "todos", pk: "a", op: .update, columns: ["title": "from r0"])
    waitForNextMillisecond()
    try r1.apply(table: "todos", pk: "a", op: .remove)
    waitForNextMillisecond()
    try r2.apply(table: "todos", pk: "a", op: .update, columns: ["title": "from r2"])
    // Each head is frozen in a bare mirror, so each merge below sees the
    // replicas' own commits and not a merge another replica made.
    for (i, replica) in [r0, r1, r2].enumerated() {
      try replica.commit()
      let mirror = fixture.scratch.path + "/m\(i).git"
      try git(["init", "-q", "--bare", mirror], in: fixture.scratch.path)
      try git(["push", "-q", mirror, "HEAD:refs/heads/main"], in: replica.rootPath)
      for other in [r0, r1] where other !== replica {
        try git(["remote", "add", "m\(i)", "file://" + mirror], in: other.rootPath)
      }
    }
    // r0 meets the two assignments before the remove; r1 meets them with
    // its remove between them.
    try r0.sync(remote: "m2", push: false)
    try r0.sync(remote: "m1", push: false)
    try r1.sync(remote: "m0", push: false)
    try r1.sync(remote: "m2", push: false)
    for replica in [r0, r1] {
      #expect(try replica.collection("todos").findByID("a").exec() == nil)
      #expect(try replica.conflicts().isEmpty)  // the remove came after the lost value
    }
    #expect(try Self.recordFiles(r0).count == 1)
    #expect(try Self.recordFiles(r1) == Self.recordFiles(r0))
  }

  // MARK: fsck

  @Test func checkPlacesEveryFaultInTheRecords() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    func record(table: String, pk: String = "a") -> Conflict {
      Conflict(
        table: table, pk: pk, path: "title", winningStamp: stamp(20, "B"), winningValue: "w",
        losingStamp: stamp(10, "A"), losingValue: "l")
    }
    let good = record(table: "todos")
    try scratch.write(good.recordPath, String(decoding: good.recordBytes, as: UTF8.self))
    #expect(try store.check().isEmpty)

    let gone = record(table: "gone")
    try scratch.write(gone.recordPath, String(decoding: gone.recordBytes, as: UTF8.self))
    let badStamp = String(decoding: record(table: "todos", pk: "b").recordBytes, as: UTF8.self)
      .replacingOccurrences(of: "10-0000-A", with: "yesterday")
    try scratch.write(Conflict.folder + "/" + String(repeating: "b", count: 40) + ".json", badStamp)
    try scratch.write(Conflict.folder + "/" + String(repeating: "c", count: 40) + ".json", "{\"table\": ")
    let renamed = record(table: "todos", pk: "d")
    try scratch.write(
      Conflict.folder + "/" + String(repeating: "d", count: 40) + ".json",
      String(decoding: renamed.recordBytes, as: UTF8.self))
    let problems = try store.check().map(\.description)
    let folder = Conflict.folder + "/"
    #expect(
      problems.contains(
        "\(gone.recordPath):\(tableLine(gone)): error: conflict record for table 'gone', which folio.yaml does not define"
      ), "\(problems)")
    #expect(
      problems.contains {
        $0.hasPrefix(folder + String(repeating: "b", count: 40) + ".json:")
          && $0.contains("error: conflict record: 'loser.stamp' is not a stamp")
      },
      "\(problems)")
    #expect(
      problems.contains { $0.hasPrefix(folder + String(repeating: "c", count: 40) + ".json:1:11: error:") },
      "\(problems)")
    #expect(
      problems.contains { $0.contains("named '\(String(repeating: "d", count: 40)).json'") }, "\(problems)")
    #expect(problems.count == 4, "\(problems)")
    // The listing passes over what it cannot read or place, and lists the rest.
    #expect(try store.conflicts().map(\.pk).sorted() == ["a", "d"])
  }

  /// The line:col of the `table` member's value in a record's bytes.
  func tableLine(_ record: Conflict) -> String {
    let (line, column) = JSONPointer(["table"]).lineAndColumn(in: record.recordBytes)
    return "\(line):\(column)"
  }

  /// The listing reads only the recorded documents' op-log lines; a line it
  /// cannot judge from its bytes (spaces, escapes) is parsed, never dropped.
  @Test func theOpLogPreFilterNeverDropsAWantedOp() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    let lines = [
      #"{"hlc":"1796153602749-0000-aaaa","op":"update","pk":"a","set":{"t":1},"table":"todos"}"#,
      #"{"hlc":"1796153602750-0000-aaaa","op":"update","pk":"b","set":{"t":2},"table":"todos"}"#,
      #"{"hlc": "1796153602751-0000-aaaa", "op": "update", "pk": "a", "set": {"t": 3}, "table": "todos"}"#,
      #"{"hlc":"1796153602752-0000-aaaa","op":"update","pk":"\u0061","set":{"t":4},"table":"todos"}"#,
      #"{"hlc":"1796153602753-0000-aaaa","op":"update","pk":"ab","set":{"t":5},"table":"todos"}"#,
    ]
    try scratch.write(Store.opsFolder + "/aaaa.ndjson", lines.joined(separator: "\n") + "\n")
    let all = try OpLog.allEntries(root: store.rootPath)
    let some = try OpLog.allEntries(root: store.rootPath, pks: ["a"])
    #expect(all.count == 5)
    #expect(some.map(\.line) == [1, 3, 4])
    #expect(some.allSatisfy { $0.op.pk == "a" })
  }
}
