import FolioTestSupport
import Foundation
import Testing

/// Commits built by an attacker with git
/// plumbing (trees written by hand, where `git mktree` would refuse the
/// names) and pushed straight into the bare remote, run through `folio
/// sync`, `folio clone` and plain `git pull` with Folio's merge driver.
/// Nothing may be written outside the store or into `.git`, the error names
/// the path, read commands keep working, and an honest sync afterwards
/// succeeds.
@Suite struct HostileRemoteTests {
  /// One tree entry, as git stores it.
  struct Entry {
    var mode: String
    var name: String
    var id: String
  }

  /// Writes objects and moves `main` in the bare remote directly, as an
  /// attacker with push access (or a server of their own) can.
  struct Attacker {
    let box: GitPullTests.Sandbox
    var root: String { box.root.path }

    func git(_ command: String) throws -> String {
      let result = try shellGit("--git-dir=remote.git \(command)", in: root)
      guard result.status == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: ["git": command, "output": result.output])
      }
      return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func blob(_ content: String) throws -> String {
      try Data(content.utf8).write(to: URL(fileURLWithPath: root + "/attacker.bin"))
      return try git("hash-object -w attacker.bin")
    }

    /// The entries of `treeish` in the remote (names are plain here).
    func entries(_ treeish: String?) throws -> [Entry] {
      guard let treeish else { return [] }
      return try git("ls-tree \(treeish)").split(separator: "\n").map { line in
        let parts = line.split(separator: "\t", maxSplits: 1)
        let fields = parts[0].split(separator: " ")
        // ls-tree pads a folder's mode; a tree object does not.
        let mode = fields[0] == "040000" ? "40000" : String(fields[0])
        return Entry(mode: mode, name: String(parts[1]), id: String(fields[2]))
      }
    }

    /// A tree of `entries`, written raw (`git mktree` refuses `..` and
    /// `.git`), sorted as git sorts: a folder as if its name ended in '/'.
    func tree(_ entries: [Entry]) throws -> String {
      func key(_ e: Entry) -> [UInt8] { Array(e.name.utf8) + (e.mode == "40000" ? [0x2F] : []) }
      var bytes: [UInt8] = []
      for entry in entries.sorted(by: { key($0).lexicographicallyPrecedes(key($1)) }) {
        bytes += Array("\(entry.mode) \(entry.name)".utf8) + [0]
        var hex = Array(entry.id.utf8)
        while !hex.isEmpty {
          bytes.append(UInt8(String(decoding: hex.prefix(2), as: UTF8.self), radix: 16)!)
          hex.removeFirst(2)
        }
      }
      try Data(bytes).write(to: URL(fileURLWithPath: root + "/attacker.bin"))
      return try git("hash-object -t tree -w --literally attacker.bin")
    }

    /// `base` with `entry` put in the folder `folders` (made where
    /// missing); `replacing` false keeps an entry of the same name too.
    func tree(_ base: String?, adding entry: Entry, in folders: [String], replacing: Bool = true) throws
      -> String
    {
      var list = try entries(base)
      guard let first = folders.first else {
        if replacing { list.removeAll { $0.name == entry.name } }
        return try tree(list + [entry])
      }
      let existing = list.first { $0.name == first && $0.mode == "40000" }
      let sub = try tree(existing?.id, adding: entry, in: Array(folders.dropFirst()), replacing: replacing)
      list.removeAll { $0.name == first && $0.mode == "40000" }
      return try tree(list + [Entry(mode: "40000", name: first, id: sub)])
    }

    /// Commits `tree` on top of the remote's `main` and points `main` at it.
    @discardableResult
    func publish(_ tree: String, message: String = "attack") throws -> String {
      let commit = try git("commit-tree \(tree) -p main -m \(message)")
      _ = try git("update-ref refs/heads/main \(commit)")
      return commit
    }
  }

  /// The paths an attack aims at, outside every store.
  static func targets(_ root: String) -> [String] {
    [root + "/pwned", root + "/outside.json", root + "/outside-dir/evil", root + "/hook-ran"]
  }

  /// A hostile commit: how to build its tree from the remote's, and the
  /// path every error must name.
  struct Case: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let path: String
    let build: @Sendable (Attacker, String) throws -> String
    /// The check of git's (`transfer.fsckObjects`, named as under
    /// `fsck.<id>`) that refuses the objects before they are stored, when
    /// git refuses them itself; Folio's own validation names the path.
    var gitCheck: String? = nil

    func refusedByGit(_ check: String) -> Case {
      var refused = self
      refused.gitCheck = check
      return refused
    }

    static func payload(_ a: Attacker) throws -> Entry {
      Entry(mode: "100755", name: "pwned", id: try a.blob("#!/bin/sh\ntouch '\(a.root)/hook-ran'\n"))
    }

    /// A `hooks/post-merge` under a folder named `name`.
    static func gitFolder(_ name: String) -> Case {
      Case(testDescription: name, path: name) { a, base in
        var hook = try payload(a)
        hook.name = "post-merge"
        return try a.tree(base, adding: hook, in: [name, "hooks"])
      }
    }

    static let all: [Case] = [
      Case(testDescription: "..", path: "..") { a, base in
        try a.tree(base, adding: try payload(a), in: [".."])
      }.refusedByGit("hasDotdot"),
      gitFolder(".git").refusedByGit("hasDotgit"), gitFolder(".GIT").refusedByGit("hasDotgit"),
      gitFolder("git~1").refusedByGit("hasDotgit"), gitFolder(".git.").refusedByGit("hasDotgit"),
      gitFolder(".git ").refusedByGit("hasDotgit"),
      Case(testDescription: "a/../..", path: "a/..") { a, base in
        try a.tree(base, adding: try payload(a), in: ["a", "..", ".."])
      }.refusedByGit("hasDotdot"),
      Case(testDescription: "todos/x/../../..", path: "todos/x/..") { a, base in
        try a.tree(base, adding: try payload(a), in: ["todos", "x", "..", "..", ".."])
      }.refusedByGit("hasDotdot"),
      Case(testDescription: "symlink in a table", path: "todos/evil.json") { a, base in
        try a.tree(
          base, adding: Entry(mode: "120000", name: "evil.json", id: try a.blob(a.root + "/outside.json")),
          in: ["todos"])
      },
      Case(testDescription: "temp-named symlink in a table", path: "todos/.t.json.folio-tmp") { a, base in
        try a.tree(
          base,
          adding: Entry(mode: "120000", name: ".t.json.folio-tmp", id: try a.blob(a.root + "/outside.json")),
          in: ["todos"])
      },
      Case(testDescription: "symlink and folder of one name", path: "link") { a, base in
        let link = Entry(mode: "120000", name: "link", id: try a.blob(a.root + "/outside-dir"))
        var evil = try payload(a)
        evil.name = "evil"
        let withFolder = try a.tree(base, adding: evil, in: ["link"])
        return try a.tree(withFolder, adding: link, in: [], replacing: false)
      }.refusedByGit("duplicateEntries"),
      Case(testDescription: "gitlink in a table", path: "todos/sub") { a, base in
        try a.tree(
          base, adding: Entry(mode: "160000", name: "sub", id: String(repeating: "ab", count: 20)),
          in: ["todos"])
      },
      Case(testDescription: ".gitmodules symlink", path: ".gitmodules") { a, base in
        try a.tree(
          base, adding: Entry(mode: "120000", name: ".gitmodules", id: try a.blob(a.root + "/outside.json")),
          in: [])
      },
      Case(testDescription: "250-byte document name", path: String(repeating: "n", count: 245)) { a, base in
        try a.tree(
          base,
          adding: Entry(
            mode: "100644", name: String(repeating: "n", count: 245) + ".json", id: try a.blob("{}\n")),
          in: ["todos"])
      },
      Case(testDescription: "250-byte file name outside tables", path: String(repeating: "m", count: 250)) {
        a, base in
        try a.tree(
          base,
          adding: Entry(mode: "100644", name: String(repeating: "m", count: 250), id: try a.blob("x\n")),
          in: ["docs"])
      },
    ]
  }

  /// The remote seeded by r0 (one document), `v` cloned with `folio clone`
  /// and `p` cloned with plain git and set up with `folio init`; the
  /// folder `outside-dir` the links aim at.
  func victims() throws -> (GitPullTests.Sandbox, Attacker) {
    let box = try GitPullTests.Sandbox()
    try box.seedAndClone(["t": #"{"views": 1}"#])
    #expect(try FolioRunner.shell("mv r1 p", in: box.root.path) == 0)
    try box.folio(["clone", box.remote, "v"], in: "")
    try FileManager.default.createDirectory(
      atPath: box.root.path + "/outside-dir", withIntermediateDirectories: true)
    return (box, Attacker(box: box))
  }

  /// What `.git/hooks` and `.git/info` of `replica` hold: names and bytes.
  func gitControl(_ box: GitPullTests.Sandbox, _ replica: String) -> [String: Data] {
    var result: [String: Data] = [:]
    for folder in ["hooks", "info"] {
      let path = box.root.path + "/" + replica + "/.git/" + folder
      for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
        result[folder + "/" + name] = FileManager.default.contents(atPath: path + "/" + name) ?? Data()
      }
    }
    return result
  }

  func expectNothingOutside(
    _ box: GitPullTests.Sandbox, _ step: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    for target in Self.targets(box.root.path) {
      var st = stat()
      #expect(lstat(target, &st) != 0, "\(step): \(target) was written", sourceLocation: sourceLocation)
    }
  }

  /// `status`, `get` and `fsck` still work in `replica`.
  func expectReadable(
    _ box: GitPullTests.Sandbox, _ replica: String, _ step: String, strictFsck: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let directory = box.root.path + "/" + replica
    let status = try FolioRunner.run(["status"], in: directory)
    #expect(status.status == 0, "\(step): status: \(status.stderr)", sourceLocation: sourceLocation)
    let get = try FolioRunner.run(["get", "todos", "t"], in: directory)
    #expect(
      get.status == 0 && get.stdout.contains("\"views\""), "\(step): get: \(get.stderr)",
      sourceLocation: sourceLocation)
    let fsck = try FolioRunner.run(["fsck"], in: directory)
    if strictFsck {
      #expect(fsck.status == 0, "\(step): fsck: \(fsck.stderr)", sourceLocation: sourceLocation)
    } else {
      // git itself wrote what Folio refuses: a report, not a crash.
      #expect(
        fsck.status <= 1 && fsck.stdout.contains("checked"), "\(step): fsck: \(fsck.stderr)",
        sourceLocation: sourceLocation)
    }
  }

  @Test(arguments: Case.all)
  func hostileCommitIsRefused(_ attack: Case) throws {
    let (box, attacker) = try victims()
    defer { box.root.remove() }
    let honest = try attacker.git("rev-parse main")
    let hooks = (v: gitControl(box, "v"), p: gitControl(box, "p"))
    try attacker.publish(try attack.build(attacker, try attacker.git("rev-parse main^{tree}")))

    let tracked = try shellGit("rev-parse refs/remotes/origin/main", in: box.root.path + "/v").output
    let sync = try FolioRunner.run(["sync"], in: box.root.path + "/v")
    #expect(sync.status == 1, "folio sync: \(sync.stdout) \(sync.stderr)")
    #expect(
      try shellGit("rev-parse refs/remotes/origin/main", in: box.root.path + "/v").output == tracked,
      "the refused tip moved the remote-tracking ref")
    #expect(sync.stderr.contains("UNSAFE_PATH"), "\(sync.stderr)")
    // The error names what refused it: git's check by its id, or the path.
    let named = attack.gitCheck.map { "(\($0): " } ?? attack.path
    #expect(sync.stderr.contains(named), "the error names \(named): \(sync.stderr)")
    #expect(gitControl(box, "v") == hooks.v, "folio sync wrote into .git")
    expectNothingOutside(box, "folio sync")
    try expectReadable(box, "v", "after folio sync")

    let clone = try FolioRunner.run(["clone", box.remote, "c"], in: box.root.path)
    #expect(clone.status == 1, "folio clone: \(clone.stderr)")
    // A clone from a path copies the objects without a transfer, so git
    // checks nothing and Folio's validation names the path.
    #expect(
      clone.stderr.contains("UNSAFE_PATH")
        && (clone.stderr.contains(named) || clone.stderr.contains(attack.path)),
      "\(clone.stderr)")
    #expect(
      !FileManager.default.fileExists(atPath: box.root.path + "/c/todos"), "the clone checked out files")
    expectNothingOutside(box, "folio clone")

    // Plain git refuses many of these itself; what it lets through, Folio's
    // post-merge hook reports.
    let pull = try FolioRunner.shellOutput(
      "git pull --no-rebase --no-edit origin main", in: box.root.path + "/p")
    #expect(pull.output.contains(attack.path), "git pull's output names the path: \(pull.output)")
    #expect(gitControl(box, "p") == hooks.p, "git pull wrote into .git")
    expectNothingOutside(box, "git pull")
    try expectReadable(box, "p", "after git pull", strictFsck: false)

    // The remote is put right: an honest commit on the old main.
    _ = try attacker.git("update-ref refs/heads/main \(honest)")
    let honestTree = try attacker.tree(
      try attacker.git("rev-parse main^{tree}"),
      adding: Entry(mode: "100644", name: "h.json", id: try attacker.blob("{\n  \"id\": \"h\"\n}\n")),
      in: ["todos"])
    try attacker.publish(honestTree, message: "honest")
    try box.folio(["sync"], in: "v")
    #expect(box.file("v/todos/h.json") != nil, "the honest sync brought the document")
    try expectReadable(box, "v", "after the honest sync")
    try box.folio(["clone", box.remote, "c2"], in: "")
    #expect(box.file("c2/todos/h.json") != nil)
    expectNothingOutside(box, "honest sync")
  }

  /// A remote `folio.yaml` that does not load, as an attacker would commit
  /// it: a table folder in `.git/hooks`, outside the store, nested in
  /// another table's, or YAML that does not parse.
  @Test(arguments: [
    (
      "version: 1\ntables:\n  todos:\n    path: todos\n  evil:\n    path: .git/hooks\n", "folio.yaml:6:11",
      ".git"
    ),
    (
      "version: 1\ntables:\n  todos:\n    path: todos\n  evil:\n    path: ../outside-dir\n",
      "folio.yaml:6:11", ".."
    ),
    (
      "version: 1\ntables:\n  todos:\n    path: todos\n  evil:\n    path: todos/inner\n", "folio.yaml:6:11",
      "todos"
    ),
    ("version: 1\ntables: [unclosed\n", "folio.yaml:2:9", "invalid YAML"),
  ])
  func aRemoteConfigThatDoesNotLoadIsRefusedBeforeItLands(yaml: String, position: String, mention: String)
    throws
  {
    let (box, attacker) = try victims()
    defer { box.root.remove() }
    let before = (v: box.file("v/folio.yaml"), p: box.file("p/folio.yaml"))
    let tree = try attacker.tree(
      try attacker.git("rev-parse main^{tree}"),
      adding: Entry(mode: "100644", name: "folio.yaml", id: try attacker.blob(yaml)), in: [])
    let commit = try attacker.publish(tree)

    let tracked = try shellGit("rev-parse refs/remotes/origin/main", in: box.root.path + "/v").output
    let sync = try FolioRunner.run(["sync"], in: box.root.path + "/v")
    #expect(sync.status == 1, "folio sync: \(sync.stdout) \(sync.stderr)")
    #expect(
      try shellGit("rev-parse refs/remotes/origin/main", in: box.root.path + "/v").output == tracked,
      "the refused tip moved the remote-tracking ref")
    #expect(sync.stderr.contains(position) && sync.stderr.contains(mention), "\(sync.stderr)")
    #expect(sync.stderr.contains(String(commit.prefix(12))), "the error names the commit: \(sync.stderr)")
    #expect(box.file("v/folio.yaml") == before.v)
    try expectReadable(box, "v", "after folio sync")

    let clone = try FolioRunner.run(["clone", box.remote, "c"], in: box.root.path)
    #expect(clone.status == 1, "folio clone: \(clone.stderr)")
    #expect(clone.stderr.contains(position), "\(clone.stderr)")
    #expect(!FileManager.default.fileExists(atPath: box.root.path + "/c"), "a failed clone left its folder")

    // Plain git writes it; Folio's post-merge hook puts it back and undoes the pull.
    let pull = try FolioRunner.shellOutput(
      "git pull --no-rebase --no-edit origin main", in: box.root.path + "/p")
    #expect(pull.output.contains(position) && pull.output.contains("the pull was undone"), "\(pull.output)")
    #expect(box.file("p/folio.yaml") == before.p)
    try expectReadable(box, "p", "after git pull")
  }

  /// The modes of the entries at `paths` in `treeish` of `replica`.
  func modes(_ box: GitPullTests.Sandbox, _ replica: String, _ treeish: String) throws -> String {
    try FolioRunner.shellOutput("git ls-tree -r \(treeish)", in: box.root.path + "/" + replica).output
  }

  @Test func symlinksExecutablesAndGitlinksOutsideTablesAreKept() throws {
    let (box, attacker) = try victims()
    defer { box.root.remove() }
    let base = try attacker.git("rev-parse main^{tree}")
    var tree = try attacker.tree(
      base,
      adding: Entry(mode: "120000", name: "link", id: try attacker.blob(box.root.path + "/outside-dir")),
      in: ["docs"])
    tree = try attacker.tree(
      tree, adding: Entry(mode: "100755", name: "run.sh", id: try attacker.blob("#!/bin/sh\necho hi\n")),
      in: ["tools"])
    tree = try attacker.tree(
      tree, adding: Entry(mode: "160000", name: "sub", id: String(repeating: "cd", count: 20)), in: ["vendor"]
    )
    try attacker.publish(tree)

    for replica in ["v", "c"] {
      if replica == "v" {
        try box.folio(["sync"], in: "v")
      } else {
        try box.folio(["clone", box.remote, "c"], in: "")
      }
      let root = box.root.path + "/" + replica
      let target = try? FileManager.default.destinationOfSymbolicLink(atPath: root + "/docs/link")
      #expect(target == box.root.path + "/outside-dir", "\(replica): docs/link is a symlink")
      #expect(FileManager.default.isExecutableFile(atPath: root + "/tools/run.sh"), "\(replica): run.sh")
      var isFolder: ObjCBool = false
      #expect(
        FileManager.default.fileExists(atPath: root + "/vendor/sub", isDirectory: &isFolder)
          && isFolder.boolValue)
      let staged = try FolioRunner.shellOutput("git ls-files -s", in: root).output
      #expect(
        staged.contains("120000") && staged.contains("100755") && staged.contains("160000"), "\(staged)")
      let status = try FolioRunner.shellOutput("git status --porcelain", in: root).output
      #expect(status.isEmpty, "\(replica): git sees changes: \(status)")
      try expectReadable(box, replica, replica)
    }
    // A later sync pushes a document, and the modes go back unchanged.
    try box.folio(["put", "todos", "n", "-"], in: "v", input: "{}")
    try box.folio(["sync"], in: "v")
    let pushed = try attacker.git("ls-tree -r main")
    #expect(pushed.contains("120000 blob") && pushed.contains("docs/link"), "\(pushed)")
    #expect(pushed.contains("100755 blob") && pushed.contains("tools/run.sh"), "\(pushed)")
    #expect(pushed.contains("160000 commit"), "\(pushed)")
    #expect(pushed.contains("todos/n.json"))
    expectNothingOutside(box, "modes")
  }

  @Test func aSymlinkReplacedByAFolderIsNeverWrittenThrough() throws {
    let (box, attacker) = try victims()
    defer { box.root.remove() }
    let base = try attacker.git("rev-parse main^{tree}")
    let link = Entry(mode: "120000", name: "link", id: try attacker.blob(box.root.path + "/outside-dir"))
    try attacker.publish(try attacker.tree(base, adding: link, in: []))
    try box.folio(["sync"], in: "v")
    #expect(
      try FolioRunner.shell("git pull -q --no-rebase --no-edit origin main", in: box.root.path + "/p") == 0)
    var evil = try Case.payload(attacker)
    evil.name = "evil"
    try attacker.publish(try attacker.tree(base, adding: evil, in: ["link"]))
    try box.folio(["sync"], in: "v")
    #expect(
      try FolioRunner.shell("git pull -q --no-rebase --no-edit origin main", in: box.root.path + "/p") == 0)
    for replica in ["v", "p"] {
      var st = stat()
      #expect(
        lstat(box.root.path + "/\(replica)/link", &st) == 0 && st.st_mode & S_IFMT == S_IFDIR, "\(replica)")
      #expect(box.file("\(replica)/link/evil") != nil, "\(replica)")
    }
    expectNothingOutside(box, "link then folder")
    try expectReadable(box, "v", "link then folder")
  }

  @Test func foldersAndFilesSwapAsInGit() throws {
    let (box, attacker) = try victims()
    defer { box.root.remove() }
    let base = try attacker.git("rev-parse main^{tree}")
    let x = Entry(mode: "100644", name: "x", id: try attacker.blob("in a folder\n"))
    let a = Entry(mode: "100644", name: "a", id: try attacker.blob("a file\n"))
    let steps = [
      try attacker.tree(base, adding: x, in: ["docs", "a"]),
      try attacker.tree(base, adding: a, in: ["docs"]),
      try attacker.tree(base, adding: x, in: ["docs", "a"]),
    ]
    for (n, tree) in steps.enumerated() {
      try attacker.publish(tree, message: "step\(n)")
      try box.folio(["sync"], in: "v")
      #expect(
        try FolioRunner.shell("git pull -q --no-rebase --no-edit origin main", in: box.root.path + "/p") == 0)
      for replica in ["v", "p"] {
        let expected = n == 1 ? "a file\n" : "in a folder\n"
        #expect(box.file("\(replica)/docs/" + (n == 1 ? "a" : "a/x")) == expected, "step \(n), \(replica)")
        let status = try FolioRunner.shellOutput("git status --porcelain", in: box.root.path + "/" + replica)
          .output
        #expect(status.isEmpty, "step \(n), \(replica): \(status)")
      }
      try expectReadable(box, "v", "step \(n)")
    }
  }

  @Test func anUnfinishableCheckoutLeavesReadsWorking() throws {
    let (box, attacker) = try victims()
    defer { box.root.remove() }
    let from = try attacker.git("rev-parse main")
    let target = try attacker.publish(
      try attacker.tree(
        try attacker.git("rev-parse main^{tree}"),
        adding: Entry(mode: "100644", name: "f", id: try attacker.blob("f\n")), in: ["docs"]))
    #expect(try box.git("fetch -q origin", in: "v") == 0)
    // A user's own symlink where the checkout must write a folder; the
    // checkout journal of a sync interrupted before it.
    #expect(symlink(box.root.path + "/outside-dir", box.root.path + "/v/docs") == 0)
    try box.root.write("v/.git/folio/checkout", "\(from) \(target) refs/heads/main\n")

    try expectReadable(box, "v", "journal pending", strictFsck: false)
    let status = try FolioRunner.run(["status"], in: box.root.path + "/v")
    #expect(
      status.stdout.contains("unfinished sync checkout") && status.stdout.contains("docs"), "\(status.stdout)"
    )
    let put = try FolioRunner.run(["put", "todos", "w", "-"], in: box.root.path + "/v", input: "{}")
    #expect(
      put.status == 1 && put.stderr.contains("UNSAFE_PATH") && put.stderr.contains("docs"), "\(put.stderr)")
    expectNothingOutside(box, "journal")
    #expect(!FileManager.default.fileExists(atPath: box.root.path + "/outside-dir/f"))

    // The cause removed, the next command finishes the checkout.
    #expect(unlink(box.root.path + "/v/docs") == 0)
    try box.folio(["put", "todos", "w", "-"], in: "v", input: "{}")
    #expect(box.file("v/docs/f") == "f\n")
    #expect(try box.git("diff --quiet HEAD -- docs", in: "v") == 0)
  }
}
