import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Testing

/// ``Mutation/apply(to:pk:key:)`` applies a run of removals in one pass
/// per parent object; these check that the result is the one applying them
/// one at a time in order gives.
struct MutationApplyTests {
  private func apply(_ assignments: [(String, JSONValue?)], to document: JSONObject) -> JSONObject? {
    let mutation = Mutation(
      kind: .update,
      assignments: assignments.map { Mutation.Assignment(path: FieldPath($0.0), value: $0.1) })
    return mutation.apply(to: document, pk: "k", key: "id").document
  }

  @Test func aRemovalThenASetOfTheSameColumnKeepsTheSet() throws {
    let document: JSONObject = ["id": "k", "a": 1, "b": 2, "n": ["x": 1, "y": 2]]
    let after = apply(
      [("a", nil), ("b", nil), ("a", 3), ("n.x", nil), ("n", ["z": 9]), ("n.z", nil)], to: document)
    #expect(after == ["id": "k", "a": 3, "n": .object(JSONObject())])
  }

  @Test func removalsUnderSeveralParentsAndOfAParentAndItsChild() throws {
    let document: JSONObject = ["id": "k", "p": ["q": ["r": 1, "s": 2], "t": 3], "u": 4]
    #expect(
      apply([("p.q.r", nil), ("p.t", nil), ("u", nil)], to: document) == ["id": "k", "p": ["q": ["s": 2]]])
    #expect(apply([("p", nil), ("p.q", nil)], to: document) == ["id": "k", "u": 4])
    #expect(apply([("p.q", nil), ("p", nil)], to: document) == ["id": "k", "u": 4])
    #expect(apply([("missing.deeper", nil), ("u.not-an-object", nil)], to: document) == document)
  }

  /// 40,000 columns removed by one op (what a diff of a PATCH of nulls
  /// records), and the same number added back: every one of them.
  @Test func manyRemovalsInOneOp() throws {
    var members: [(String, JSONValue)] = [("id", "k")]
    for i in 0..<40_000 { members.append(("f\(i)", .number("\(i)"))) }
    let document = JSONObject(members)
    let removed = try #require(apply((0..<40_000).map { ("f\($0)", nil) }, to: document))
    #expect(removed == ["id": "k"])
    let odd = try #require(
      apply((0..<40_000).map { ("f\($0)", $0 % 2 == 0 ? nil : .number("\($0)")) }, to: document))
    #expect(odd.count == 20_001)
    #expect(odd["f39999"] == 39999)
    #expect(odd["f39998"] == nil)
  }
}
