import FolioJSON
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

  /// The newest stamp of any line, read from the lines' leading stamps:
  /// lines out of order count, and a line it cannot read that way makes it
  /// unknown, so that the merge parses the logs.
  @Test func theNewestStampOfAnyLineIsReadFromTheLeadingStamps() {
    let unordered = OpHistory(files: [
      "A.ndjson": log([5, 12, 3], replica: "A"), "B.ndjson": log([12], replica: "B") + Array("\n".utf8),
      "C.ndjson": [],
    ])
    #expect(unordered.newestStampOfAnyLine() == .some(HLC(wall: 12, counter: 0, replica: "B")))
    #expect(OpHistory(files: ["C.ndjson": []]).newestStampOfAnyLine() == .some(nil))
    #expect(OpHistory(files: [:]).newestStampOfAnyLine() == .some(nil))
    // An op line with its keys in another order, or a stamp with an escape.
    let reordered = Array(#"{"op":"remove","hlc":"0000000000009-0000-A","pk":"a","table":"t"}"#.utf8) + [10]
    #expect(OpHistory(files: ["A.ndjson": log([1]) + reordered]).newestStampOfAnyLine() == nil)
    let escaped =
      Array(#"{"hlc":"0000000000009-0000-\u0041","op":"remove","pk":"a","table":"t"}"#.utf8) + [10]
    #expect(OpHistory(files: ["A.ndjson": escaped]).newestStampOfAnyLine() == nil)
    // A last line without its newline is not a line yet.
    let cut = log([1]) + Array(#"{"hlc":"0000000000099-0000-A""#.utf8)
    #expect(
      OpHistory(files: ["A.ndjson": cut]).newestStampOfAnyLine()
        == .some(HLC(wall: 1, counter: 0, replica: "A")))
  }

  /// The newest stamp of any log, each log's last line being its newest.
  @Test func theLatestStampIsTheNewestLastLine() {
    let history = OpHistory(files: [
      "A.ndjson": log([1, 7], replica: "A"), "B.ndjson": log([3, 9], replica: "B") + Array("\n\n".utf8),
      "C.ndjson": [], "D.ndjson": Array("not an op\n".utf8),
    ])
    #expect(history.latestStamp() == HLC(wall: 9, counter: 0, replica: "B"))
    #expect(OpHistory(files: ["C.ndjson": []]).latestStamp() == nil)
  }
}
