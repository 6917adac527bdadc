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
