import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioGit

/// A sync fetches from a remote git reaches with its own protocol through
/// `git fetch-pack`, whose pack check stands in for `git fetch`'s walk of
/// every tree of every ref: the store stays connected, nothing is left
/// locked, the remote's settings are honoured, and a remote that cannot
/// send what its branch names moves nothing here.
@Suite(.serialized)
struct FetchPackTests {
  static func doc(_ store: Store, _ pk: String) throws -> JSONObject? {
    try store.collection("todos").findByID(pk).exec()?.value
  }

  static let yaml = "version: 1\ntables:\n  todos:\n    path: todos\n    columns:\n      views: counter\n"

  @Test(arguments: [
    ("/srv/stores/todos.git", true), ("file:///srv/todos.git", true), ("ssh://git@host/todos.git", true),
    ("git@host:todos.git", true), ("git://127.0.0.1:9418/todos.git", true), ("SSH://host/r.git", true),
    ("https://example.com/todos.git", false), ("http://127.0.0.1:8080/r.git", false),
    ("ext::ssh host git-upload-pack r.git", false), ("-oProxyCommand=x", false),
    ("ftp://example.com/r.git", false),
  ])
  func nativeTransportsAreThoseGitReachesThroughUploadPack(_ url: String, _ native: Bool) {
    #expect(SystemGit.speaksNatively(url) == native, "\(url)")
  }

  /// Several syncs each way: the replicas converge, every fetched tip is
  /// in a store `git fsck` finds connected, no `.keep` file is left, and
  /// the remote-tracking ref shows the remote's branch.
  @Test func syncsThroughFetchPackLeaveAConnectedUnlockedStore() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    for k in 0..<3 { try a.apply(table: "todos", pk: "t\(k)", op: .insert, columns: ["views": 0]) }
    try a.sync()
    let b = try fixture.clone("b")
    for round in 0..<4 {
      try a.apply(
        table: "todos", pk: "t\(round % 3)", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
      try a.sync()
      try b.apply(
        table: "todos", pk: "t\(round % 2)", op: .update,
        transforms: ["views": ["op": "increment", "by": 10]])
      try b.sync()
    }
    // Past git's unpack limit (100 objects), a fetch keeps its pack whole:
    // it must not stay locked against repacking.
    for k in 0..<120 { try b.apply(table: "todos", pk: "bulk\(k)", op: .insert, columns: ["views": k]) }
    try b.sync()
    try a.sync()
    for store in [a, b] {
      #expect(try Self.doc(store, "t0")?["views"] == 22)
      let fsck = try git(["fsck", "--connectivity-only", "--no-dangling"], in: store.rootPath)
      #expect(fsck.status == 0, "\(fsck.output)")
      let packs = try FileSystem.list(store.rootPath + "/.git/objects/pack") ?? []
      #expect(!packs.contains { $0.hasSuffix(".keep") }, "\(packs)")
      let tracking = try git(["rev-parse", "refs/remotes/origin/main"], in: store.rootPath).output
      #expect(tracking == (try git(["rev-parse", "main"], in: fixture.remotePath).output))
    }
  }

  /// Every fetch and merge leaves a pack; past ``Store/packsBeforeRepack``
  /// a sync merges the small ones, and the store stays whole.
  @Test func syncsMergeTheSmallPacksTheyLeave() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    try a.apply(table: "todos", pk: "t", op: .insert, columns: ["views": 0])
    try a.sync()
    let b = try fixture.clone("b")
    func packs(_ store: Store) throws -> Int {
      (try FileSystem.list(store.rootPath + "/.git/objects/pack") ?? []).count { $0.hasSuffix(".pack") }
    }
    var most = 0
    for round in 0..<(SyncEngine.packsBeforeRepack + 6) {
      try a.apply(table: "todos", pk: "t", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
      try a.sync()
      try b.apply(table: "todos", pk: "b\(round)", op: .insert, columns: ["views": round])
      try b.sync()
      most = max(most, try packs(b))
    }
    try a.sync()
    #expect(most <= SyncEngine.packsBeforeRepack, "b held \(most) packs")
    for store in [a, b] {
      #expect(try Self.doc(store, "t")?["views"] == .integer(SyncEngine.packsBeforeRepack + 6))
      let fsck = try git(["fsck", "--no-dangling"], in: store.rootPath)
      #expect(fsck.status == 0, "\(fsck.output)")
    }
  }

  /// `remote.<name>.uploadpack` names the program the remote runs, as for
  /// `git fetch`: here a wrapper that leaves a mark before it runs git's.
  @Test func theRemotesUploadPackSettingIsHonoured() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    let b = try fixture.clone("b")
    let mark = fixture.scratch.path + "/upload-pack-ran"
    let wrapper = fixture.scratch.path + "/upload-pack"
    try "#!/bin/sh\necho ran >> '\(mark)'\nexec git-upload-pack \"$@\"\n".write(
      toFile: wrapper, atomically: true, encoding: .utf8)
    chmod(wrapper, 0o755)
    try git(["config", "remote.origin.uploadpack", wrapper], in: b.rootPath)
    try a.apply(table: "todos", pk: "x", op: .insert, columns: ["views": 3])
    try a.sync()
    #expect(try b.sync().action == .fastForward)
    #expect(try Self.doc(b, "x")?["views"] == 3)
    #expect(FileSystem.exists(mark))
  }

  /// The remote's branch names a commit whose tree the remote has lost: the
  /// sync fails naming the remote, no ref moves, the working tree is as it
  /// was, and once the remote is whole again the next sync brings it in.
  @Test func aRemoteThatCannotSendItsBranchMovesNothing() throws {
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let a = try fixture.seed(yaml: Self.yaml)
    let b = try fixture.clone("b")
    try b.apply(table: "todos", pk: "kept", op: .insert, columns: ["views": 1])
    try b.commit()
    try a.apply(table: "todos", pk: "lost", op: .insert, columns: ["views": 2])
    try a.sync()
    // The pushed objects are loose in the bare remote: hide the new
    // commit's tree.
    let tree = try git(["rev-parse", "main^{tree}"], in: fixture.remotePath).output
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let object = fixture.remotePath + "/objects/" + tree.prefix(2) + "/" + tree.dropFirst(2)
    #expect(FileSystem.exists(object), "the push left the tree loose")
    #expect(rename(object, object + ".aside") == 0)
    let head = try git(["rev-parse", "HEAD"], in: b.rootPath).output
    let refs = try git(["for-each-ref"], in: b.rootPath).output
    #expect {
      try b.sync()
    } throws: { error in
      (error as? FolioError)?.code == .remote && "\(error)".contains("origin")
    }
    #expect(try git(["rev-parse", "HEAD"], in: b.rootPath).output == head)
    #expect(try git(["for-each-ref"], in: b.rootPath).output == refs)
    #expect(try Self.doc(b, "lost") == nil)
    #expect(try Self.doc(b, "kept")?["views"] == 1)
    #expect(rename(object + ".aside", object) == 0)
    #expect(try b.sync().action == .merged)
    #expect(try Self.doc(b, "lost")?["views"] == 2)
  }
}
