import FolioJSON
import FolioSystem
import Testing

@testable import FolioCore
@testable import FolioGit

/// How a merge reads op logs: the ops a side added to a log, and the newest
/// stamp of a log, found from its end.
struct OpHistoryTests {
  func log(_ walls: [Int64], replica: String = "A") -> [UInt8] {
    var bytes: [UInt8] = []
    for wall in walls {
      Op(
        hlc: HLC(wall: wall, counter: 0, replica: replica), table: "todos", pk: "a",
        mutation: Mutation(kind: .remove)
      )
      .appendLogLine(to: &bytes)
    }
    return bytes
  }

  @Test(
    arguments: [
      ("a\nb\n", "b"), ("a\nb", "b"), ("a\n\n\n", "a"), ("only", "only"), ("\n\n", nil), ("", nil),
      ("\nx\n\n", "x"),
    ] as [(String, String?)])
  func theLastLineIsFoundFromTheEnd(_ text: String, _ expected: String?) {
    #expect(OpHistory.lastLine(of: Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) } == expected)
  }

  /// A malformed op in a log, as another replica could push it, is refused
  /// with the document it was for, whichever part of it is wrong.
  @Test(
    arguments: [
      #"{"hlc":"0000000000001-0000-A","op":"update","pk":"t1","table":"todos","transforms":{"n":{"op":"explode"}}}"#,
      #"{"hlc":"0000000000001-0000-A","op":"update","pk":"t1","table":"todos","transforms":{"n":{"op":"increment","by":"x"}}}"#,
      #"{"hlc":"0000000000001-0000-A","op":"update","pk":"t1","table":"todos","set":[1]}"#,
      #"{"hlc":"0000000000001-0000-A","op":"update","pk":"t1","table":"todos","unset":[1]}"#,
    ])
  func aMalformedOpNamesItsTableAndPk(_ line: String) throws {
    let json = try JSONValue(parsing: Array(line.utf8))
    let error = try #require(throws: FolioError.self) { try Op(json: json) }
    #expect(error.table == "todos")
    #expect(error.pk == "t1")
    #expect(error.message.hasPrefix("op log entry for todos/t1: "), "\(error.message)")
  }

  @Test func newOpsAreTheTailOfALogThatExtendsItsBase() throws {
    let base = log([1, 2, 3])
    let grown = try OpHistory.newOps(base + log([4, 5]), since: base, file: "ops/A.ndjson")
    #expect(grown.map(\.line) == [4, 5])
    #expect(grown.map(\.op.hlc.wall) == [4, 5])
    // From an empty base, every op is new; an unchanged log has none.
    #expect(try OpHistory.newOps(base, since: [], file: "ops/A.ndjson").map(\.line) == [1, 2, 3])
    #expect(try OpHistory.newOps(base, since: base, file: "ops/A.ndjson").isEmpty)
    // A log rewritten (compacted) is compared op by op, not as a prefix.
    let rewritten = log([2, 3, 6])
    let changed = try OpHistory.newOps(rewritten, since: base, file: "ops/A.ndjson")
    #expect(changed.map(\.op.hlc.wall) == [6])
    #expect(changed.map(\.line) == [3])
    // A shorter log whose bytes differ is not taken for an extension.
    #expect(try OpHistory.newOps(log([9]), since: base, file: "ops/A.ndjson").map(\.op.hlc.wall) == [9])
    // A log its base extends (the other side's copy, longer) adds nothing,
    // nor does one whose last line is cut short.
    #expect(try OpHistory.newOps(log([1, 2]), since: base, file: "ops/A.ndjson").isEmpty)
    #expect(try OpHistory.newOps(Array(base.dropLast(5)), since: base, file: "ops/A.ndjson").isEmpty)
  }

  /// One document's ops are found by its pk's text and only those lines are
  /// parsed: the result is the full parse's ops of that document, for pks
  /// that are prefixes of others, need escapes, or appear inside values.
  @Test func oneDocumentsOpsAreTheFullParsesOpsOfIt() throws {
    let pks = ["d1", "d12", "d1\"", "é \\ \u{1}", "\"pk\":\"d1\"", "x"]
    var bytes: [UInt8] = []
    var wall: Int64 = 0
    for round in 0..<4 {
      for pk in pks {
        wall += 1
        // A value holding another pk's marker text, escaped as JSON keeps it.
        let mutation = Mutation(
          kind: .update,
          assignments: [.init(path: FieldPath("title"), value: .string("\"pk\":\"d1\" round \(round)"))])
        Op(
          hlc: HLC(wall: wall, counter: 0, replica: "A"), table: round == 3 ? "old" : "todos", pk: pk,
          mutation: mutation
        )
        .appendLogLine(to: &bytes)
      }
    }
    // A last line without its newline is not a whole line yet.
    let cut = Array(bytes.dropLast(3))
    let all = try OpHistory.parse(cut[...], file: "ops/A.ndjson")
    let renamed: (String) -> String = { $0 == "old" ? "todos" : $0 }
    for pk in pks {
      let key = OpHistory.DocumentKey(table: "todos", pk: pk)
      let expected = all.filter { $0.pk.utf8Equals(pk) }.map(\.hlc)
      let found = try OpHistory.ops(of: key, in: cut, file: "ops/A.ndjson", tableName: renamed).map(\.hlc)
      #expect(found == expected, "pk \(pk)")
      #expect(found.count == (pk == "x" ? 3 : 4), "pk \(pk)")
    }
    // Under the table's former name the ops are not found.
    #expect(
      try OpHistory.ops(of: .init(table: "todos", pk: "d1"), in: cut, file: "ops/A.ndjson", tableName: { $0 })
        .count
        == 3)
  }

  /// The newest stamp of any line, read from the lines' leading stamps:
  /// lines out of order count, and a line it cannot read that way makes it
  /// unknown, so that the merge parses the logs.
  @Test func theNewestStampOfAnyLineIsReadFromTheLeadingStamps() throws {
    let unordered = OpHistory(files: [
      "A.ndjson": log([5, 12, 3], replica: "A"), "B.ndjson": log([12], replica: "B") + Array("\n".utf8),
      "C.ndjson": [],
    ])
    #expect(try unordered.newestStampOfAnyLine() == .some(HLC(wall: 12, counter: 0, replica: "B")))
    #expect(try OpHistory(files: ["C.ndjson": []]).newestStampOfAnyLine() == .some(nil))
    #expect(try OpHistory(files: [:]).newestStampOfAnyLine() == .some(nil))
    // An op line with its keys in another order, or a stamp with an escape.
    let reordered = Array(#"{"op":"remove","hlc":"0000000000009-0000-A","pk":"a","table":"t"}"#.utf8) + [10]
    #expect(try OpHistory(files: ["A.ndjson": log([1]) + reordered]).newestStampOfAnyLine() == nil)
    let escaped =
      Array(#"{"hlc":"0000000000009-0000-\u0041","op":"remove","pk":"a","table":"t"}"#.utf8) + [10]
    #expect(try OpHistory(files: ["A.ndjson": escaped]).newestStampOfAnyLine() == nil)
    // A last line without its newline is not a line yet.
    let cut = log([1]) + Array(#"{"hlc":"0000000000099-0000-A""#.utf8)
    #expect(
      try OpHistory(files: ["A.ndjson": cut]).newestStampOfAnyLine()
        == .some(HLC(wall: 1, counter: 0, replica: "A")))
  }

  /// The newest stamp of any log, each log's last line being its newest.
  @Test func theLatestStampIsTheNewestLastLine() throws {
    let history = OpHistory(files: [
      "A.ndjson": log([1, 7], replica: "A"), "B.ndjson": log([3, 9], replica: "B") + Array("\n\n".utf8),
      "C.ndjson": [], "D.ndjson": Array("not an op\n".utf8),
    ])
    #expect(try history.latestStamp() == HLC(wall: 9, counter: 0, replica: "B"))
    #expect(try OpHistory(files: ["C.ndjson": []]).latestStamp() == nil)
  }

  /// A replica's log in segments: its newest stamp is in the newest
  /// segment that has a real one, and older segments are not read.
  @Test func theNewestStampsComeFromEachReplicasNewestSegment() throws {
    #expect(OpLogSegments.replicaAndSegment("A.ndjson") == ("A", 0))
    #expect(OpLogSegments.replicaAndSegment("A.12.ndjson") == ("A", 12))
    #expect(OpLogSegments.fileName(replica: "A", segment: 3) == "A.3.ndjson")
    let history = OpHistory(files: [
      "A.ndjson": log([1, 7], replica: "A"), "A.1.ndjson": log([8, 20], replica: "A"),
      "A.2.ndjson": log([0], replica: "A"), "A.3.ndjson": [],
      // Not an op: never read, as an older segment of B.
      "B.ndjson": Array("not an op\n".utf8), "B.1.ndjson": log([9], replica: "B"),
    ])
    #expect(
      history.segmentsByReplica() == [
        ["A.3.ndjson", "A.2.ndjson", "A.1.ndjson", "A.ndjson"], ["B.1.ndjson", "B.ndjson"],
      ])
    #expect(try history.latestStamp() == HLC(wall: 20, counter: 0, replica: "A"))
    #expect(try history.newestStampOfAnyLine() == .some(HLC(wall: 20, counter: 0, replica: "A")))
  }
}
