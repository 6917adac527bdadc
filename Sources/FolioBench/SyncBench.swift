import Folio
import FolioSystem
import Foundation

// folio-bench sync: commit and merge against plain git, in one run.
//   - commit: `folio commit` of N new documents against `git add -A && git
//     commit` of the same files (time and .git size);
//   - merge: two replicas each change C documents (C/2 of them the same,
//     with counter increments and assignments); `folio sync` against plain
//     `git merge` of the same two commits, and the conflicts each leaves;
//   - transport: `folio clone` against `git clone` over file:// and over ssh
//     to a local sshd, and a sync's push and fetch of one change against
//     `git fetch`, `git push` and `git merge --ff-only`, whole and transport
//     alone.
// Run: bash scripts/build-release.sh && .build/release/folio-bench sync [--docs N] [--changes C]

struct SyncBenchOptions {
  var docs = 100_000
  var changes = 10_000
  var directory = NSTemporaryDirectory() + "/folio-sync-bench"
  var keep = false

  init(_ arguments: [String]) {
    forEachBenchArgument(arguments) { flag, value in
      switch flag {
      case "--docs": docs = Int(value()) ?? docs
      case "--changes": changes = Int(value()) ?? changes
      case "--dir": directory = value()
      case "--keep": keep = true
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench sync [--docs N] [--changes C] [--dir DIR]
            --docs N      documents in the table (default 100000)
            --changes C   documents each replica changes; half overlap (default 10000)
            --dir DIR     scratch directory (default $TMPDIR/folio-sync-bench; emptied first)
            --keep        also keep replica b as it was before the sync, in DIR/b.before-sync
                          (its origin: DIR/remote.before-sync.git, the remote as it was then),
                          to profile the sync again: cp -a DIR/b.before-sync DIR/b2 && cd DIR/b2 && folio sync --no-push
          """)
        exit(0)
      default: fatalError("unknown option \(flag); see --help")
      }
    }
  }
}

@discardableResult
func shell(_ command: String, in directory: String) -> (status: Int32, output: String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", command]
  process.currentDirectoryURL = URL(fileURLWithPath: directory)
  var environment = ProcessInfo.processInfo.environment
  for (key, value) in [
    ("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@folio"), ("GIT_COMMITTER_NAME", "bench"),
    ("GIT_COMMITTER_EMAIL", "bench@folio"),
  ] where environment[key] == nil {
    environment[key] = value
  }
  process.environment = environment
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try! process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = ContinuousClock.now
  try body()
  let elapsed = ContinuousClock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func directorySize(_ path: String) -> Int {
  Int(shell("du -sk '\(path)' | cut -f1", in: "/").output.trimmingCharacters(in: .whitespacesAndNewlines))
    ?? 0
}

/// The files of the sync benchmark's store before `folio init`: a
/// `folio.yaml` with an `items` table (a counter and a set), and `docs`
/// documents in `items/`.
func writeItemsStoreFiles(at directory: String, docs: Int) throws {
  let yaml = """
    version: 1
    tables:
      items:
        path: items
        columns:
          views: counter
          tags: set
    """
  try FileManager.default.createDirectory(atPath: directory + "/items", withIntermediateDirectories: true)
  try yaml.write(toFile: directory + "/folio.yaml", atomically: true, encoding: .utf8)
  print("writing \(docs) documents…")
  for i in 0..<docs {
    let document: JSONObject = [
      "id": .string("d\(i)"), "views": .number(String(i % 1000)), "title": .string("item \(i)"),
      "tags": .array([.string("t\(i % 7)")]), "price": .number("\(i % 500).25"),
    ]
    _ = FileManager.default.createFile(
      atPath: directory + "/items/d\(i).json", contents: Data(JSONValue.object(document).canonicalBytes()))
  }
}

func runSyncBenchmark(_ arguments: [String]) throws {
  let options = SyncBenchOptions(arguments)
  let root = options.directory
  shell("rm -rf '\(root)' && mkdir -p '\(root)'", in: "/")
  let storeA = try measureFirstCommit(root: root, docs: options.docs)
  // Two replicas through a bare remote.
  let remote = root + "/remote.git"
  shell("git init -q --bare -b main '\(remote)' && git -C '\(root)/a' remote add origin '\(remote)'", in: "/")
  try storeA.sync()
  let storeB = try Store.clone(url: "file://" + remote, into: URL(fileURLWithPath: root + "/b"))
  let half = options.changes / 2
  print("changing \(options.changes) documents on each replica (\(half) on both)…")
  try changeItems(storeA, range: 0..<options.changes, by: 1, title: "from a")
  try changeItems(storeB, range: half..<(half + options.changes), by: 10, title: "from b")
  try storeA.sync()
  try storeB.commit()
  let plain = prepareMerges(root: root, remote: remote, keep: options.keep)
  var sync: SyncSummary?
  let folioSync = try seconds { sync = try storeB.sync(push: false) }
  var gitStatus: Int32 = 0
  let gitMerge = seconds { gitStatus = shell("git merge -q --no-edit origin/main", in: plain).status }
  let folioConflicts = countConflicts(in: root + "/b", table: "items")
  let gitConflicts = countConflicts(in: plain, table: "items")
  // Check the merge: overlapping documents got both increments.
  let sample = try storeB.collection("items").findByID("d\(half)").exec()
  let expectedViews = half % 1000 + 11
  print(
    String(
      format:
        "merge of %d + %d changed documents (%d on both sides): folio sync %.2f s (%d resolved by replay, %@), git merge %.2f s (exit %d, %@): folio/git %.2fx",
      options.changes, options.changes, half, folioSync, sync?.resolvedDocuments ?? 0,
      folioConflicts.description, gitMerge, gitStatus, gitConflicts.description, folioSync / gitMerge))
  print(
    "check: d\(half).views = \(sample?.value["views"]?.compactString ?? "missing") (expected \(expectedViews))"
  )
  try runTransportRows(root: root, remote: remote, storeA: storeA, options: options)
}

/// The commit row: `docs` new documents committed by `folio commit` in
/// `root/a` and by `git add -A && git commit` in a copy, `root/g`.
private func measureFirstCommit(root: String, docs: Int) throws -> Store {
  let a = root + "/a"
  try writeItemsStoreFiles(at: a, docs: docs)
  let g = root + "/g"
  shell("cp -a '\(a)' '\(g)' && git init -q -b main '\(g)'", in: "/")
  let storeA = try Store.create(at: URL(fileURLWithPath: a))
  shell("sync", in: "/")
  var summary: CommitSummary?
  let folioCommit = try seconds { summary = try storeA.commit(message: "import") }
  // git's commit of 100k loose objects would start `git gc --auto` in the
  // background, still packing while the size is read and the merge is
  // timed. The timed commit skips it; git's own auto maintenance then runs
  // untimed, in the foreground, so the size is what git ends up with.
  let gitCommit = seconds {
    let result = shell("git add -A && git -c gc.auto=0 commit -q -m import", in: g)
    precondition(result.status == 0, result.output)
  }
  shell("git -c gc.autoDetach=false gc --auto -q", in: g)
  let folioSize = directorySize(a + "/.git")
  let gitSize = directorySize(g + "/.git")
  print(
    String(
      format:
        "commit of %d new documents: folio commit %.2f s (%d synthetic ops), git add -A && git commit %.2f s: folio/git %.2fx; .git %d KB vs %d KB",
      docs, folioCommit, summary?.syntheticOps ?? 0, gitCommit, folioCommit / gitCommit, folioSize, gitSize))
  return storeA
}

/// Changes the documents `d<i>` for `i` in `range`: a title, and `views`
/// incremented by `by`.
private func changeItems(_ store: Store, range: Range<Int>, by: Int, title: String) throws {
  var start = range.lowerBound
  while start < range.upperBound {
    let end = min(range.upperBound, start + 1000)
    try store.write { tx in
      for i in start..<end {
        try tx.apply(
          table: "items", pk: "d\(i)", op: .update, columns: ["title": .string(title + " \(i)")],
          transforms: ["views": ["op": "increment", "by": .number(String(by))]])
      }
    }
    start = end
  }
}

/// Makes `root/plain`, a copy of b without Folio's driver, for plain git's
/// merge of the same two commits, and fetches into both; returns its path.
private func prepareMerges(root: String, remote: String, keep: Bool) -> String {
  let plain = root + "/plain"
  shell(
    "cp -a '\(root)/b' '\(plain)' && git -C '\(plain)' config --unset merge.folio.driver; echo '* merge=text' > '\(plain)/.git/info/attributes'; git -C '\(plain)' fetch -q origin && git -C '\(plain)' update-index -q --refresh",
    in: "/")
  // `cp -a` gives every file of the copy a new inode and ctime; the
  // refresh (untimed) brings plain's index up to date, as b's is, so that
  // `git merge` does not rehash 100k files that did not change.
  // Both merges start from the same two commits already here: b fetches
  // too, as plain did, so `folio sync`'s own fetch finds nothing new and
  // the timed work is the merge, the checkout and the commit scan.
  shell("git -C '\(root)/b' fetch -q origin", in: "/")
  if keep {
    // With the remote as it was too: the transport rows push to the remote
    // later, and a sync of the copy against it would fetch those as well.
    shell(
      "cp -a '\(root)/b' '\(root)/b.before-sync' && cp -a '\(remote)' '\(root)/remote.before-sync.git' && git -C '\(root)/b.before-sync' remote set-url origin 'file://\(root)/remote.before-sync.git'",
      in: "/")
  }
  shell("sync", in: "/")
  return plain
}

/// Clone, push and fetch of the same data through Folio (which runs the
/// system git and validates what arrives) and through plain git, over
/// `file://` and over ssh to an sshd started here. Each sync row gives two
/// ratios: the whole sync against git's commands, and its transport alone
/// (the time Folio spent in git's fetch and push, ``SyncSummary/transferTime``)
/// against `git fetch` and `git push`.
private func runTransportRows(root: String, remote: String, storeA: Store, options: SyncBenchOptions) throws {
  // A second bare remote, byte for byte the first, for plain git's pushes.
  let plainRemote = root + "/plain-remote.git"
  shell("cp -a '\(remote)' '\(plainRemote)'", in: "/")
  let spares = try runCloneRows(root: root, remote: remote, plainRemote: plainRemote, docs: options.docs)
  try runPushAndFetchRounds(root: root, plainRemote: plainRemote, storeA: storeA, changes: options.changes)
  shell("rm -rf " + spares.map { "'\($0)'" }.joined(separator: " "), in: "/")
}

/// The clone rows: over `file://`, into tmpfs, and over ssh. Returns the
/// clones made, to remove at the end.
private func runCloneRows(root: String, remote: String, plainRemote: String, docs: Int) throws -> [String] {
  // One untimed clone first, by git: the first 100,000 files created
  // after the merge phase cost the file system more, whichever tool
  // creates them.
  var spares = [root + "/c-warm-up"]
  shell("git clone -q 'file://\(plainRemote)' '\(root)/c-warm-up' && sync", in: "/")
  spares += try runCloneRow(
    over: "file://", folioURL: "file://" + remote, gitURL: "file://" + plainRemote, root: root, name: "file",
    docs: docs)
  // The same clone into memory (tmpfs), where creating files costs the
  // same from one moment to the next: what is left is each tool's own work.
  let memory = "/dev/shm/folio-sync-bench-\(getpid())"
  if FileManager.default.fileExists(atPath: "/dev/shm") {
    shell("mkdir -p '\(memory)'", in: "/")
    _ = try runCloneRow(
      over: "file:// into tmpfs", folioURL: "file://" + remote, gitURL: "file://" + plainRemote, root: memory,
      name: "tmpfs", docs: docs)
    shell("rm -rf '\(memory)'", in: "/")
  }
  try withLocalSSHServer(root: root) { base in
    spares += try runCloneRow(
      over: "ssh (local sshd)", folioURL: base + remote, gitURL: base + plainRemote, root: root, name: "ssh",
      docs: docs)
  }
  return spares
}

/// Three rounds, as medians. Each: a commit of `changes` (at most 1,000)
/// documents in a, pushed by a's sync and, the same commit, by plain git
/// from a copy of a to the plain remote; then each clone brings it in.
private func runPushAndFetchRounds(root: String, plainRemote: String, storeA: Store, changes: Int) throws {
  let plainA = root + "/a-git"
  shell("cp -a '\(root)/a' '\(plainA)' && git -C '\(plainA)' remote set-url origin '\(plainRemote)'", in: "/")
  let storeC = try Store(at: URL(fileURLWithPath: root + "/c-file-folio"))
  let cGit = root + "/c-file-git"
  let changed = min(changes, 1000)
  var push = SyncRowTimes()
  var fetch = SyncRowTimes()
  for round in 0..<3 {
    try storeA.write { tx in
      for i in 0..<changed {
        try tx.apply(
          table: "items", pk: "d\(i)", op: .update, columns: ["title": .string("pushed \(round) \(i)")])
      }
    }
    try storeA.commit(message: "push bench \(round)")
    // The same commit with the same objects in the same packs: a fetch
    // would store the new tree as a delta, which git's push then reuses,
    // where a's push computes it.
    shell(
      "cp -n '\(root)/a/.git/objects/pack/'* .git/objects/pack/ && git update-ref refs/heads/main "
        + "$(git -C '\(root)/a' rev-parse HEAD)", in: plainA)
    shell("sync", in: "/")
    func folioPush() throws {
      var summary: SyncSummary?
      push.folio.append(try seconds { summary = try storeA.sync() })
      push.transfer.append(summary?.transferTime.seconds ?? 0)
    }
    func gitPush() {
      push.git.append([
        gitSeconds("git fetch -q origin", in: plainA), gitSeconds("git push -q origin main", in: plainA),
      ])
    }
    func folioFetch() throws {
      var summary: SyncSummary?
      fetch.folio.append(try seconds { summary = try storeC.sync(push: false) })
      fetch.transfer.append(summary?.transferTime.seconds ?? 0)
    }
    func gitFetch() {
      fetch.git.append([
        gitSeconds("git fetch -q origin main", in: cGit),
        gitSeconds("git merge -q --ff-only FETCH_HEAD", in: cGit),
      ])
    }
    if round % 2 == 0 {
      try folioPush()
      gitPush()
      shell("sync", in: "/")
      try folioFetch()
      gitFetch()
    } else {
      gitPush()
      try folioPush()
      shell("sync", in: "/")
      gitFetch()
      try folioFetch()
    }
  }
  push.print(
    "push of \(changed) changed documents over file://", what: "fetch, nothing to merge, push",
    commands: ["git fetch", "git push"])
  fetch.print(
    "fetch of \(changed) changed documents over file://", what: "fetch, fast-forward, checkout",
    commands: ["git fetch", "git merge --ff-only"])
}

/// One sync row's times, a value per round: the whole sync and its own git
/// transport (``SyncSummary/transferTime``) for Folio, and each of git's
/// commands for plain git, of which `git fetch` and `git push` are its
/// transport.
private struct SyncRowTimes {
  var folio: [Double] = []
  var transfer: [Double] = []
  var git: [[Double]] = []

  /// Prints the medians, and two ratios in the same direction (folio/git):
  /// the whole sync against the sum of git's commands, and the sync's
  /// transport against git's transport command alone.
  func print(_ label: String, what: String, commands: [String]) {
    let folioMedian = benchMedianOf(folio)
    let transferMedian = benchMedianOf(transfer)
    let gitParts = commands.indices.map { index in benchMedianOf(git.map { $0[index] }) }
    let gitTotal = benchMedianOf(git.map { $0.reduce(0, +) })
    let gitTransport = benchMedianOf(
      git.map {
        zip(commands, $0).filter { ["git fetch", "git push"].contains($0.0) }.reduce(0) { $0 + $1.1 }
      })
    let parts = zip(commands, gitParts).map { String(format: "%@ %.2f s", $0, $1) }.joined(separator: " + ")
    Swift.print(
      String(
        format:
          "%@ (medians of %d): folio sync %.2f s (%@; git's fetch and push inside it %.2f s), %@: whole folio/git %.2fx, transport folio/git %.2fx",
        label, folio.count, folioMedian, what, transferMedian, parts, folioMedian / gitTotal,
        transferMedian / gitTransport))
  }
}

/// `folio clone` against `git clone` of the same repository, each into a
/// folder of its own under `root`: three of each, taking turns in ABBA
/// order, as medians. Creating 100,000 files costs the file system more
/// or less from one moment to the next, far more than either tool's own
/// work, so a single pair would mostly measure the order they ran in.
/// The last clone of each stays (`c-NAME-folio`, `c-NAME-git`), for the
/// sync rows; the others are returned, for removal after every row.
private func runCloneRow(
  over transport: String, folioURL: String, gitURL: String, root: String, name: String, docs: Int
) throws -> [String] {
  var folioTimes: [Double] = []
  var gitTimes: [Double] = []
  var spares: [String] = []
  for turn in 0..<3 {
    // A fresh folder each turn, removed only once every row has run: ext4
    // passes over inodes freed in the last 30 s when it allocates one, so
    // creating 100,000 files just after removing as many costs far more.
    let suffix = turn == 2 ? "" : "-\(turn)"
    let folioFolder = root + "/c-\(name)-folio" + suffix
    let gitFolder = root + "/c-\(name)-git" + suffix
    if turn < 2 { spares += [folioFolder, gitFolder] }
    func folio() throws {
      folioTimes.append(
        try seconds { _ = try Store.clone(url: folioURL, into: URL(fileURLWithPath: folioFolder)) })
      shell("sync", in: "/")
    }
    func git() {
      gitTimes.append(gitSeconds("git clone -q '\(gitURL)' '\(gitFolder)'", in: "/"))
      shell("sync", in: "/")
    }
    if turn % 2 == 0 {
      try folio()
      git()
    } else {
      git()
      try folio()
    }
  }
  let folioMedian = benchMedianOf(folioTimes)
  let gitMedian = benchMedianOf(gitTimes)
  print(
    String(
      format:
        "clone of %d documents over %@ (medians of 3): folio clone %.2f s, git clone %.2f s: folio/git %.2fx",
      docs, transport, folioMedian, gitMedian, folioMedian / gitMedian))
  return spares
}

/// Runs a git command line, checks that it worked, and returns its time.
private func gitSeconds(_ command: String, in directory: String) -> Double {
  seconds {
    let result = shell(command, in: directory)
    precondition(result.status == 0, "\(command): \(result.output)")
  }
}

/// Starts an sshd on 127.0.0.1 with a host key, a client key and a
/// known_hosts file of its own (given to ssh through `GIT_SSH_COMMAND`,
/// which Folio's git runs too), runs `body` with the `ssh://user@host:port`
/// base of its URLs, and stops it. Without sshd, says so and skips.
private func withLocalSSHServer(root: String, _ body: (String) throws -> Void) throws {
  guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") else {
    print("clone over ssh: skipped, no /usr/sbin/sshd (apt-get install openssh-server)")
    return
  }
  let dir = root + "/sshd"
  try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
  try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
  for key in ["host", "client"] {
    precondition(shell("ssh-keygen -q -t ed25519 -N '' -f '\(dir)/\(key)'", in: "/").status == 0)
  }
  shell("cp '\(dir)/client.pub' '\(dir)/authorized_keys'", in: "/")
  var server: (pid: Int32, port: Int)?
  for port in (0..<20).map({ _ in Int.random(in: 20_000..<30_000) }) {
    try """
    Port \(port)
    ListenAddress 127.0.0.1
    HostKey \(dir)/host
    AuthorizedKeysFile \(dir)/authorized_keys
    PidFile \(dir)/sshd.pid
    StrictModes no
    UsePAM no
    PermitRootLogin yes
    PasswordAuthentication no
    SetEnv PATH=/usr/local/bin:/usr/bin:/bin:/usr/lib/git-core

    """.write(toFile: dir + "/sshd_config", atomically: true, encoding: .utf8)
    // posix_spawn, not Foundation's Process: a long-lived Process beside
    // the short ones `shell` runs can make their waits hang.
    guard
      let pid = DetachedProcess.spawn(
        executable: "/usr/sbin/sshd", arguments: ["-D", "-f", dir + "/sshd_config"], reaperName: "bench-sshd")
    else { break }
    // Listening, or gone (the port was taken): whichever comes first.
    while kill(pid, 0) == 0, !Loopback.accepts(port: port) { usleep(20_000) }
    if kill(pid, 0) == 0 {
      server = (pid, port)
      break
    }
  }
  guard let server else {
    print("clone over ssh: skipped, sshd did not start")
    return
  }
  defer { kill(server.pid, SIGKILL) }
  let hostKey = try String(contentsOfFile: dir + "/host.pub", encoding: .utf8)
  try "[127.0.0.1]:\(server.port) \(hostKey)".write(
    toFile: dir + "/known_hosts", atomically: true, encoding: .utf8)
  setenv(
    "GIT_SSH_COMMAND",
    "ssh -i \(dir)/client -o IdentitiesOnly=yes -o UserKnownHostsFile=\(dir)/known_hosts "
      + "-o StrictHostKeyChecking=yes -o BatchMode=yes", 1)
  defer { unsetenv("GIT_SSH_COMMAND") }
  let user = String(cString: getpwuid(getuid()).pointee.pw_name)
  try body("ssh://\(user)@127.0.0.1:\(server.port)")
}

/// What a merge left unresolved in one working tree, counted the same way
/// for Folio and for git.
struct ConflictCount: CustomStringConvertible {
  /// Paths with unmerged index entries (stages 1 to 3).
  var unmerged: Set<String> = []
  /// Table files holding conflict markers or text that is not valid JSON.
  var broken: Set<String> = []

  /// Files in either set, each counted once.
  var total: Int { unmerged.union(broken).count }

  var description: String {
    "\(total) conflicts: \(unmerged.count) unmerged in the index, \(broken.count) table files with markers or invalid JSON"
  }
}

/// Counts the conflicts a merge left in `worktree`: unmerged index entries
/// (`git ls-files -u`), and every file of the table folder that holds a
/// conflict marker line or does not parse as JSON.
func countConflicts(in worktree: String, table: String) -> ConflictCount {
  var count = ConflictCount()
  for line in shell("git ls-files -u -z", in: worktree).output.split(separator: "\0") {
    // "mode id stage\tpath"
    if let tab = line.firstIndex(of: "\t") { count.unmerged.insert(String(line[line.index(after: tab)...])) }
  }
  let folder = worktree + "/" + table
  let markers = ["<<<<<<<", "=======", ">>>>>>>", "|||||||"].map { Array($0.utf8) }
  for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
  where name.hasSuffix(".json") {
    guard let data = FileManager.default.contents(atPath: folder + "/" + name) else { continue }
    let bytes = [UInt8](data)
    var lineStart = true
    var marked = false
    for i in bytes.indices where lineStart || bytes[i] == UInt8(ascii: "\n") {
      if bytes[i] == UInt8(ascii: "\n") {
        lineStart = true
        continue
      }
      lineStart = false
      if markers.contains(where: { bytes[i...].starts(with: $0) }) {
        marked = true
        break
      }
    }
    if marked || (try? JSONValue(parsing: bytes)) == nil { count.broken.insert(table + "/" + name) }
  }
  return count
}
