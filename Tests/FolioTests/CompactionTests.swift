import Folio
import FolioCore
import FolioTestSupport
import Foundation
import Testing

/// `folio compact` keeps every op some known ref has not merged: local
/// branches count as known refs, as remote-tracking ones do.
@Suite struct CompactionTests {
  @Test func localBranchesKeepTheirUnmergedOps() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: SyncTests.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 0])
    try a.sync()
    // A local branch left behind at this commit, never pushed.
    try git(["branch", "feature"], in: a.rootPath)
    let feature = try git(["rev-parse", "feature"], in: a.rootPath).output
      .trimmingCharacters(in: .whitespacesAndNewlines)
    for _ in 0..<3 {
      try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
    }
    try a.sync()

    let summary = try a.compact()
    #expect(summary.mergedEverywhere == feature, "compaction ignored the local branch")
    #expect(summary.droppedOps == 1)
    #expect(summary.keptOps == 3)

    // Work on the branch still merges into main by replay.
    try git(["checkout", "-q", "feature"], in: a.rootPath)
    let onBranch = try Store(at: URL(fileURLWithPath: a.rootPath))
    try onBranch.apply(
      table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 10]])
    try onBranch.commit()
    try git(["checkout", "-q", "main"], in: a.rootPath)
    // Merged as `folio sync` merges (through a mirror holding the branch).
    let mirror = fixture.scratch.path + "/feature.git"
    try git(["init", "-q", "--bare", mirror], in: fixture.scratch.path)
    try git(["push", "-q", mirror, "feature:refs/heads/main"], in: a.rootPath)
    try git(["remote", "add", "feature", "file://" + mirror], in: a.rootPath)
    #expect(try a.sync(remote: "feature", push: false).action == .merged)
    #expect(try a.collection("todos").findByID("t").exec()?.value["views"] == 13)

    // Once the branch and its mirror are gone, only main and origin/main
    // are known refs.
    try a.sync()
    try git(["branch", "-D", "feature"], in: a.rootPath)
    try git(["remote", "remove", "feature"], in: a.rootPath)
    let again = try a.compact()
    #expect(again.keptOps == 0, "\(again)")
  }
}
