import FolioTestSupport
import Foundation
import Testing

/// Issue 13: twin pks and twin JSON keys (composed "é" and "e" + U+0301)
/// through a plain `git pull`, where git calls Folio's merge driver: both
/// twins survive as two documents and two keys.
struct TwinKeyGitPullTests {
  static let composed = "caf\u{E9}"
  static let decomposed = "cafe\u{301}"

  func increment(_ pk: String, by: Int) -> [String] {
    [
      "apply", "todos", pk, "--op", "update", "--transforms",
      #"{"views": {"op": "increment", "by": \#(by)}}"#,
    ]
  }

  func set(_ key: String, _ value: Int) -> [String] {
    ["apply", "todos", "x", "--op", "update", "--columns", #"{"\#(key)": \#(value)}"#]
  }

  @Test func twinsSurviveAPlainGitPullWithTheDriver() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone([
      Self.composed: #"{"views": 1}"#, Self.decomposed: #"{"views": 1}"#, "x": #"{"n": 0}"#,
    ])
    try box.folio(increment(Self.composed, by: 5), in: "r0")
    try box.folio(set(Self.composed, 1), in: "r0")
    try box.folio(["commit"], in: "r0")
    #expect(try box.git("push -q origin main", in: "r0") == 0)
    try box.folio(increment(Self.decomposed, by: 7), in: "r1")
    try box.folio(set(Self.decomposed, 2), in: "r1")
    try box.folio(["commit"], in: "r1")
    #expect(try box.git("pull -q --no-rebase --no-edit origin main", in: "r1") == 0)

    func get(_ pk: String) throws -> String { try box.folio(["get", "todos", pk], in: "r1").stdout }
    #expect(try get(Self.composed).contains("\"views\": 6"))
    #expect(try get(Self.decomposed).contains("\"views\": 8"))
    let x = try get("x")
    #expect(x.utf8.firstRange(of: Array(#""\#(Self.composed)": 1"#.utf8)) != nil, "\(x)")
    #expect(x.utf8.firstRange(of: Array(#""\#(Self.decomposed)": 2"#.utf8)) != nil, "\(x)")
    #expect(!x.contains("<<<<<<<"))
  }
}
