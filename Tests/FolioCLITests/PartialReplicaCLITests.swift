import FolioTestSupport
import Foundation
import Testing

/// Partial replicas (`folio clone --tables`): git's partial clone with no
/// blob, Folio's checkout of the held tables only, and syncs that bring and
/// push only what the held tables need, against the `file://` transport and
/// a real `git daemon` with `uploadpack.allowFilter` on.
@Suite struct PartialReplicaCLITests {
  /// A store of two tables pushed to a bare remote that filters: `small`
  /// (a counter and a set) and `big` (`bigCount` documents).
  struct Store {
    let root: CLIScratch
    var remote: String { root.path + "/remote.git" }
    var bigNDJSON: String { root.path + "/big.ndjson" }

    init(bigCount: Int, smallCount: Int = 40, filters: Bool = true) throws {
      root = try CLIScratch(yaml: nil)
      var big = ""
      for i in 0..<bigCount { big += #"{"id":"b\#(i)","v":\#(i),"w":"\#(i % 7)"}"# + "\n" }
      try root.write("big.ndjson", big)
      var small = ""
      for i in 0..<smallCount { small += #"{"id":"s\#(i)","n":\#(i),"tags":["t\#(i % 3)"]}"# + "\n" }
      try root.write("small.ndjson", small)
      try root.write("a/.keep", "")
      try run(["init"], in: "a")
      try run(["tables", "add", "big"], in: "a")
      try run(["tables", "add", "small", "--counter", "n", "--set", "tags"], in: "a")
      try run(["import", "big", bigNDJSON], in: "a")
      try run(["import", "small", root.path + "/small.ndjson"], in: "a")
      try shell(
        "git init -q --bare remote.git"
          + (filters ? " && git -C remote.git config uploadpack.allowFilter true" : ""))
      try shell("git -C a remote add origin '\(remote)'")
      try run(["sync"], in: "a")
    }

    @discardableResult
    func run(
      _ arguments: [String], in directory: String, input: String? = nil, environment: [String: String] = [:]
    ) throws -> FolioRunner.Result {
      let result = try FolioRunner.run(
        arguments, in: root.path + "/" + directory, input: input, environment: environment)
      #expect(
        result.status == 0, "folio \(arguments.joined(separator: " ")) in \(directory): \(result.stderr)")
      return result
    }

    @discardableResult
    func shell(_ command: String) throws -> String {
      let (status, output) = try FolioRunner.shellOutput(command, in: root.path)
      #expect(status == 0, "\(command): \(output)")
      return output
    }

    /// The blob ids the object store of replica `name` holds here (none it
    /// would have to fetch: git lists only what is stored).
    func storedBlobs(_ name: String) throws -> Set<String> {
      let listed = try shell("git -C \(name) cat-file --batch-all-objects --batch-check 2>/dev/null")
      return Set(
        listed.split(separator: "\n").compactMap { line in
          let fields = line.split(separator: " ")
          return fields.count == 3 && fields[1] == "blob" ? String(fields[0]) : nil
        })
    }

    /// The blob ids of every file under `folder` at HEAD of replica `name`.
    func blobsAtHead(_ name: String, under folder: String) throws -> Set<String> {
      let listed = try shell("git -C \(name) ls-tree -r HEAD -- \(folder)")
      return Set(listed.split(separator: "\n").map { String($0.split(separator: " ")[2].prefix(40)) })
    }

    /// Table `table` of replica `name` as `folio export` writes it (NDJSON
    /// in pk order).
    func export(_ table: String, in name: String) throws -> String {
      try run(["export", table, "--format", "ndjson"], in: name).stdout
    }

    /// The size of folder `name` in KiB, as `du` counts it.
    func diskUse(_ name: String) throws -> Int {
      Int(try shell("du -sk \(name)").split(separator: "\t").first ?? "") ?? 0
    }
  }

  /// Issue 56's case: a partial clone of the small table holds none of the
  /// big table's 100,000 blobs, takes a fraction of the disk, and two
  /// partial replicas and a full one that sync at the same time converge,
  /// the full replica's big table changed only by itself.
  @Test func partialReplicasHoldNoBlobOfTheOtherTableAndConvergeWithAFullOne() throws {
    let store = try Store(bigCount: 100_000)
    defer { store.root.remove() }
    let daemon = try GitDaemon(base: store.root.path)
    defer { daemon.stop() }
    let cloned = try store.run(["clone", store.remote, "p1", "--tables", "small"], in: "")
    #expect(cloned.stdout.contains("partial replica: left on the remote: big"), "\(cloned.stdout)")
    try store.run(["clone", daemon.url("remote.git"), "p2", "--tables", "small"], in: "")
    try store.run(["clone", store.remote, "f"], in: "")

    let bigBlobs = try store.blobsAtHead("f", under: "data/big")
    #expect(bigBlobs.count == 100_000)
    for partial in ["p1", "p2"] {
      let stored = try store.storedBlobs(partial)
      #expect(
        stored.intersection(bigBlobs).isEmpty,
        "\(partial) holds \(stored.intersection(bigBlobs).count) big blobs")
      #expect(try store.blobsAtHead(partial, under: "data/small").isSubset(of: stored))
      #expect(!FileManager.default.fileExists(atPath: store.root.path + "/\(partial)/data/big"))
      // Plain git sees a clean tree: the big table's entries are there,
      // marked skip-worktree, and sparse checkout leaves its folder out.
      #expect(try store.shell("git -C \(partial) status --porcelain").isEmpty)
      #expect(try store.shell("git -C \(partial) config core.sparseCheckoutCone") == "true\n")
    }
    let (partialKiB, fullKiB) = (try store.diskUse("p1"), try store.diskUse("f"))
    #expect(partialKiB * 5 < fullKiB, "partial clone \(partialKiB) KiB, full clone \(fullKiB) KiB")
    let status = try store.run(["status"], in: "p1")
    #expect(status.stdout.contains("partial replica: not holding big"), "\(status.stdout)")
    #expect(status.stdout.contains("nothing to commit"), "\(status.stdout)")

    // Each replica changes the small table (the same counter, the same
    // set, and documents of its own); the full one also changes big.
    let increment = { (by: Int) in #"{"n":{"op":"increment","by":\#(by)}}"# }
    try store.run(["apply", "small", "s0", "--op", "update", "--transforms", increment(1)], in: "p1")
    try store.run(["put", "small", "p1-new", "-"], in: "p1", input: #"{"n": 1, "tags": ["p1"]}"#)
    try store.run(["apply", "small", "s0", "--op", "update", "--transforms", increment(10)], in: "p2")
    try store.run(["put", "small", "s5", "-"], in: "p2", input: #"{"n": 5, "tags": ["t2", "p2"]}"#)
    try store.run(["apply", "small", "s0", "--op", "update", "--transforms", increment(100)], in: "f")
    try store.run(["put", "big", "b77", "-"], in: "f", input: #"{"v": -77, "w": "f"}"#)
    try store.run(["rm", "big", "b78"], in: "f")
    // All three at once; the losers of the race for the remote's ref
    // fetch, merge and push again inside their sync.
    let syncs = try ["p1", "p2", "f"].map { name in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
      process.arguments = ["sync"]
      process.currentDirectoryURL = URL(fileURLWithPath: store.root.path + "/" + name)
      process.environment = ProcessInfo.processInfo.environment.merging(["FOLIO_INDEX_DAEMON": "off"]) { $1 }
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      return (name, process)
    }
    for (name, process) in syncs {
      process.waitUntilExit()
      #expect(process.terminationStatus == 0, "the concurrent sync of \(name) failed")
    }
    // Then each syncs once more, in turn, to take what the others pushed.
    for name in ["p1", "p2", "f", "p1", "p2"] { try store.run(["sync"], in: name) }

    let small = try store.export("small", in: "f")
    #expect(small.contains(#"{"id":"s0","n":111,"tags":["t0"]}"#), "\(small)")
    #expect(small.contains(#"{"id":"p1-new","n":1,"tags":["p1"]}"#), "\(small)")
    #expect(small.contains(#"{"id":"s5","n":5,"tags":["t2","p2"]}"#), "\(small)")
    for partial in ["p1", "p2"] {
      #expect(try store.export("small", in: partial) == small, "\(partial)'s small table differs from f's")
      #expect(
        try store.storedBlobs(partial).intersection(try store.blobsAtHead("f", under: "data/big")).isEmpty)
      #expect(try store.shell("git -C \(partial) status --porcelain").isEmpty)
      let absent = try FolioRunner.run(["query", "big"], in: store.root.path + "/" + partial)
      #expect(absent.status != 0)
      #expect(absent.stderr.contains("TABLE_ABSENT: table 'big' is not on this replica"), "\(absent.stderr)")
      #expect(absent.stderr.contains("folio tables subscribe big"), "\(absent.stderr)")
    }
    // The big table is the import with f's two changes, on f and on the
    // remote, whatever the partial replicas did.
    var expected = try String(contentsOfFile: store.bigNDJSON, encoding: .utf8).split(separator: "\n")
      .filter { !$0.hasPrefix(#"{"id":"b78","#) }
      .map { $0.hasPrefix(#"{"id":"b77","#) ? #"{"id":"b77","v":-77,"w":"f"}"# : String($0) }
    expected.sort { $0.split(separator: "\"")[3] < $1.split(separator: "\"")[3] }
    let big = try store.export("big", in: "f").split(separator: "\n").map(String.init)
    #expect(big.count == expected.count)
    #expect(big.sorted() == expected.sorted())
    #expect(
      try store.shell("git -C remote.git rev-parse main:data/big")
        == (try store.shell("git -C f rev-parse HEAD:data/big")))
  }

  /// Over `git http-backend` behind a password (Folio's token variables
  /// log in): the partial clone, a sync each way, and no big blob.
  @Test func aPartialReplicaSyncsOverHTTP() throws {
    let store = try Store(bigCount: 300)
    defer { store.root.remove() }
    try store.shell("git -C remote.git config http.receivepack true")
    let server = try GitHTTPServer(root: store.root.path, user: "folio", password: "s3cret")
    defer { server.stop() }
    let login = ["FOLIO_GIT_USERNAME": "folio", "FOLIO_GIT_TOKEN": "s3cret"]
    try store.run(["clone", server.url("remote.git"), "p", "--tables", "small"], in: "", environment: login)
    try store.run(["put", "small", "s3", "-"], in: "p", input: #"{"n": 33}"#, environment: login)
    try store.run(["put", "big", "b3", "-"], in: "a", input: #"{"v": 33}"#)
    try store.run(["sync"], in: "a")
    try store.run(["sync"], in: "p", environment: login)
    try store.run(["sync"], in: "a")
    #expect(try store.run(["get", "small", "s3"], in: "a").stdout.contains("33"))
    #expect(try store.export("small", in: "p") == (try store.export("small", in: "a")))
    #expect(try store.storedBlobs("p").intersection(try store.blobsAtHead("a", under: "data/big")).isEmpty)
    #expect(try store.shell("git -C p status --porcelain").isEmpty)
    #expect(server.log.contains("git-upload-pack"), "\(server.log)")

    // `folio serve` on the partial replica: the held table is served, the
    // absent one is said to be absent, not answered as empty.
    let serve = try ServeCLITests.Server(in: store.root.path + "/p")
    defer { #expect(serve.stop() == 0) }
    let held = try ServeCLITests.curl("GET", serve.base + "/small/s3.json")
    #expect(held.status == 200 && held.body.contains("33"), "\(held.body)")
    let absent = try ServeCLITests.curl("GET", serve.base + "/big.json")
    #expect(absent.status == 404, "\(absent.status) \(absent.body)")
    #expect(absent.body.contains("TABLE_ABSENT"), "\(absent.body)")
    let root = try ServeCLITests.curl("GET", serve.base + "/.json")
    #expect(
      root.status == 200 && root.json?["small"] != nil && root.json?["big"] == nil, "\(root.body.prefix(200))"
    )
  }

  /// Plain `git pull` in a partial replica: git's sparse checkout and
  /// promisor remote keep the absent table out, as Folio's sync does.
  @Test func aPlainGitPullKeepsTheAbsentTableOut() throws {
    let store = try Store(bigCount: 50)
    defer { store.root.remove() }
    try store.run(["clone", store.remote, "p", "--tables", "small"], in: "")
    try store.run(["put", "small", "s1", "-"], in: "a", input: #"{"n": 100}"#)
    try store.run(["put", "big", "b1", "-"], in: "a", input: #"{"v": 100}"#)
    try store.run(["sync"], in: "a")
    try store.shell("git -C p pull -q")
    #expect(try store.run(["get", "small", "s1"], in: "p").stdout.contains(#""n": 100"#))
    #expect(!FileManager.default.fileExists(atPath: store.root.path + "/p/data/big"))
    #expect(try store.shell("git -C p status --porcelain").isEmpty)
    #expect(try store.run(["status"], in: "p").stdout.contains("nothing to commit"))
    #expect(try store.storedBlobs("p").intersection(try store.blobsAtHead("a", under: "data/big")).isEmpty)
  }

  /// A server that does not filter would send every blob: the clone is
  /// refused, naming the setting, and leaves nothing behind. A table the
  /// remote does not have is refused the same way.
  @Test func aServerThatCannotFilterOrAnUnknownTableIsRefusedAndLeavesNothing() throws {
    let store = try Store(bigCount: 30, filters: false)
    defer { store.root.remove() }
    let refused = try FolioRunner.run(["clone", store.remote, "p", "--tables", "small"], in: store.root.path)
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("REMOTE"), "\(refused.stderr)")
    #expect(refused.stderr.contains("git config uploadpack.allowFilter true"), "\(refused.stderr)")
    try store.shell("git -C remote.git config uploadpack.allowFilter true")
    let unknown = try FolioRunner.run(["clone", store.remote, "p", "--tables", "smal"], in: store.root.path)
    #expect(unknown.status != 0)
    #expect(unknown.stderr.contains("UNKNOWN_TABLE: no table 'smal'"), "\(unknown.stderr)")
    #expect(unknown.stderr.contains("did you mean 'small'?"), "\(unknown.stderr)")
    let left = try FileManager.default.contentsOfDirectory(atPath: store.root.path).filter {
      $0.hasPrefix("p") || $0.hasPrefix(".p")
    }
    #expect(left.isEmpty, "left behind: \(left)")
  }

  /// `tables subscribe` widens a partial replica (fetching the table's
  /// blobs and checking it out), `tables unsubscribe` narrows it (the
  /// files go, git sees no deletion), and syncs go on either way.
  @Test func subscribeFetchesATableAndUnsubscribeLeavesItOnTheRemote() throws {
    let store = try Store(bigCount: 500)
    defer { store.root.remove() }
    for value in [70, 700] {
      try store.run(["put", "small", "s7", "-"], in: "a", input: #"{"n": \#(value)}"#)
      try store.run(["sync"], in: "a")
    }
    try store.run(["clone", store.remote, "p", "--tables", "small"], in: "")
    // Older versions were left on the remote with every other blob; the
    // history fetches them as it reads them.
    let history = try store.run(["history", "small", "s7", "--format", "ndjson"], in: "p").stdout
    #expect(
      history.split(separator: "\n").map { $0.contains(#""n":700"#) ? 700 : $0.contains(#""n":70"#) ? 70 : 7 }
        == [700, 70, 7], "\(history)")
    let first = try store.shell("git -C p log -1 --format=%H --grep 'created, 0 updated in small'")
      .trimmingCharacters(in: .newlines)
    let old = try store.run(["query", "small", "--as-of", first, "--where", "n >= 7"], in: "p").stdout
    #expect(old.contains(#"{"id":"s7","n":7"#) && !old.contains(#""n":70"#), "\(old)")
    let absentHistory = try FolioRunner.run(["history", "big", "b1"], in: store.root.path + "/p")
    #expect(absentHistory.stderr.contains("TABLE_ABSENT"), "\(absentHistory.stderr)")
    let listed = try store.run(["tables"], in: "p").stdout
    #expect(listed.contains("absent (not on this replica)"), "\(listed)")
    let checked = try store.run(["fsck"], in: "p").stdout
    #expect(checked.contains("in 1 table: ok (not on this replica: big)"), "\(checked)")

    let subscribed = try store.run(["tables", "subscribe", "big"], in: "p")
    #expect(
      subscribed.stdout.contains("fetched table 'big': 500 document(s) checked out"), "\(subscribed.stdout)")
    #expect(try store.export("big", in: "p") == (try store.export("big", in: "a")))
    #expect(try store.shell("git -C p status --porcelain").isEmpty)
    #expect(try store.run(["status"], in: "p").stdout.contains("nothing to commit"))
    #expect(try store.blobsAtHead("p", under: "data/big").isSubset(of: try store.storedBlobs("p")))
    // Held now: its changes go both ways.
    try store.run(["put", "big", "b1", "-"], in: "p", input: #"{"v": 1000}"#)
    try store.run(["sync"], in: "p")
    try store.run(["sync"], in: "a")
    #expect(try store.run(["get", "big", "b1"], in: "a").stdout.contains("1000"))

    // Changes not committed keep it held.
    try store.run(["put", "small", "s1", "-"], in: "p", input: #"{"n": 2}"#)
    let pending = try FolioRunner.run(["tables", "unsubscribe", "small"], in: store.root.path + "/p")
    #expect(pending.status != 0)
    #expect(
      pending.stderr.contains("WOULD_OVERWRITE: table 'small' has changes not committed"), "\(pending.stderr)"
    )
    try store.run(["sync"], in: "p")
    try store.run(["tables", "unsubscribe", "small"], in: "p")
    #expect(!FileManager.default.fileExists(atPath: store.root.path + "/p/data/small"))
    #expect(try store.shell("git -C p status --porcelain").isEmpty)
    #expect(try store.run(["status"], in: "p").stdout.contains("partial replica: not holding small"))
    // What another replica then changes in it arrives in git only.
    try store.run(["put", "small", "s2", "-"], in: "a", input: #"{"n": 20}"#)
    try store.run(["sync"], in: "a")
    try store.run(["sync"], in: "p")
    #expect(!FileManager.default.fileExists(atPath: store.root.path + "/p/data/small"))
    #expect(try store.shell("git -C p status --porcelain").isEmpty)
    try store.run(["tables", "subscribe", "small"], in: "p")
    #expect(try store.export("small", in: "p") == (try store.export("small", in: "a")))

    // A table another replica adds is not held until asked for.
    try store.run(["tables", "add", "extra"], in: "a")
    try store.run(["put", "extra", "x1", "-"], in: "a", input: #"{"x": 1}"#)
    try store.run(["sync"], in: "a")
    try store.run(["sync"], in: "p")
    #expect(!FileManager.default.fileExists(atPath: store.root.path + "/p/data/extra"))
    #expect(try store.shell("git -C p status --porcelain").isEmpty)
    let extra = try FolioRunner.run(["get", "extra", "x1"], in: store.root.path + "/p")
    #expect(extra.stderr.contains("TABLE_ABSENT: table 'extra'"), "\(extra.stderr)")
    try store.run(["tables", "subscribe", "extra"], in: "p")
    #expect(try store.run(["get", "extra", "x1"], in: "p").stdout.contains(#""x": 1"#))
  }
}
