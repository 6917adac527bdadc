internal import Clibgit2
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// What `folio commit` did.
public struct CommitSummary: Sendable {
  /// The new commit's id, or nil when there was nothing to commit.
  public var commit: String?
  /// Document files written to git (added, changed or deleted).
  public var documents: Int
  /// Edits made outside Folio that were turned into ops from their diff.
  public var syntheticOps: Int
  /// Documents left out because they are not valid (each with `file:line:col`).
  public var problems: [FolioError]
  /// The merge commit that concluded a stopped `git merge` or `git pull`
  /// first, if there was one (see ``Store/commit(message:)-93boo``).
  public var concludedMerge: String? = nil
}

/// What is waiting to be committed (`folio status`).
public struct StoreStatus: Sendable {
  /// One table's pending work.
  public struct Table: Sendable {
    /// The table.
    public var name: String
    /// Ops recorded through Folio since the last commit.
    public var pendingOps: Int
    /// Documents whose files differ from the last commit.
    public var changedDocuments: [String]
    /// Documents edited outside Folio that no op explains yet.
    public var externalEdits: [String]
    /// Evicted documents (local copy removed, kept in git).
    public var evicted: [String]
  }
  /// Per table, in config order.
  public var tables: [Table]
  /// Documents that are not valid and would be left out of a commit.
  public var problems: [FolioError]
  /// Each way a document, committed or edited, breaks its table's schema
  /// (merges are not blocked by schemas, so they can bring such documents).
  public var schemaViolations: [FolioError] = []
  /// The tables of `folio.yaml` this partial replica does not hold (see
  /// ``Store/absentTables``); empty for a full replica.
  public var absentTables: [String] = []
  /// The current branch and commit.
  public var branch: String
  /// The commit HEAD points at, if any.
  public var head: String?
}

/// One document file that differs from HEAD.
package struct PendingDocument {
  package var table: TableConfig
  package var pk: String
  /// Relative to the root.
  package var path: String
  /// The file's bytes, or nil when it was deleted.
  package var bytes: [UInt8]?
  /// The parsed file, or nil when deleted.
  package var document: JSONObject?
  /// The change no op explains, if any.
  package var synthetic: Mutation?
  /// Whether `synthetic` is a new document recorded compactly, as an import
  /// does (``Op/fromTree``): the body is in the commit, not in the log.
  package var syntheticFromTree = false
}

/// The result of comparing the working tree with HEAD.
package struct PendingScan {
  package var documents: [PendingDocument] = []
  /// Paths whose file equals HEAD but whose index stat data is stale.
  package var refresh: [(path: String, id: GitOID)] = []
  /// Evicted documents that need skip-worktree set.
  var evicted: [(path: String, id: GitOID)] = []
  /// Other Folio files that changed (op logs, folio.yaml, .gitattributes).
  var files: [(path: String, bytes: [UInt8]?)] = []
  package var problems: [FolioError] = []
  var ownOps: [OpHistory.DocumentKey: [Op]] = [:]
  var evictedByTable: [String: Set<ExactKey>] = [:]
  /// By table, the document file names that differ from HEAD: the next
  /// scan looks at them again (``WorkTreeState``), until a commit takes them.
  var changedNames: [String: [String]] = [:]
  /// By table, the names of documents left out (not valid, not readable):
  /// looked at again until they are fixed, committed or not.
  var leftOut: [String: [String]] = [:]
  /// Both, by table.
  var dirty: [String: [String]] { changedNames.merging(leftOut) { $0 + $1 } }
}

/// Which files a scan looks at: for the tables named, only the candidates
/// (the rest are as HEAD has them, which ``WorkTreeState`` vouches for),
/// with git's index read in place.
package struct ScanPlan {
  /// By table, the names that may differ from HEAD.
  var candidates: [String: Set<String>]
  /// Git's index, which holds exactly HEAD's tree; nil when no table is
  /// restricted.
  var indexFile: GitIndexFile?
  /// This replica's op log as committed.
  var ownLog: WorkTreeState.CommittedLog?
}

extension Store {
  /// Commits pending document changes and op log lines to git.
  ///
  /// Only what changed is written: Folio compares each file's stat data
  /// with git's index and rehashes only files whose stat changed. A document
  /// edited outside Folio (no watcher running) gets a synthetic op from the
  /// diff, read through the column kinds, so it merges like any other
  /// change. An evicted document stays in git, marked skip-worktree, and is
  /// never committed as deleted. Invalid documents are left out and reported.
  ///
  /// ```swift
  /// let summary = try store.commit(message: "Nightly edits")
  /// ```
  ///
  /// A plain `git pull` that stopped with conflicts (a document removed on
  /// one side and changed on the other, which git never hands to the merge
  /// driver) is concluded first, as `folio sync` would have merged it.
  @discardableResult
  public func commit(message: String? = nil) throws -> CommitSummary {
    try commit(message: message, repository: nil)
  }

  /// ``commit(message:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await store.commit(message: "nightly")
  /// ```
  @discardableResult
  public func commit(message: String? = nil) async throws -> CommitSummary {
    try await perform { try self.commit(message: message) }
  }

  /// ``status()``, run on the store's executor.
  public func status() async throws -> StoreStatus {
    try await perform { try self.status() }
  }

  /// ``commit(message:)`` through `repository` when given: a sync keeps
  /// one handle, so the index it reads here serves its checkout too.
  func commit(message: String?, repository: GitRepository?) throws -> CommitSummary {
    try lock.withLock {
      try recoverBeforeWrite()
      let concluded =
        try StoppedGitMerge(store: self).finishLocked() != nil ? try openRepository().headCommit()?.id : nil
      var summary = try commitLocked(message: message, repository: repository)
      summary.concludedMerge = concluded?.description
      return summary
    }
  }

  /// ``commit(message:)`` with the lock held, through `repository` when
  /// given (whose index is read again only if the file changed since).
  package func commitLocked(message: String?, repository shared: GitRepository? = nil) throws -> CommitSummary
  {
    // A table added to folio.yaml since `folio init` is routed to the driver too.
    try writeGitAttributes()
    let repository = try shared ?? openRepository()
    let head = try repository.headCommit()
    let headTree = try head?.tree()
    let (plan, _, answer) = scanPlan(head: head?.id, repository: repository)
    var scan = try scanPending(
      repository: repository, headTree: headTree,
      index: {
        let index = try repository.index()
        // A shared handle may hold the index from before another wrote it.
        try index.readFromDisk()
        return index
      }, plan: plan)
    let logPath = Store.opsFolder + "/" + opLogName
    let synthetic = scan.documents.filter { $0.synthetic != nil }
    if !synthetic.isEmpty {
      try writeLocked { transaction in
        for document in synthetic {
          transaction.log(
            document.synthetic!, table: document.table, pk: document.pk, fromTree: document.syntheticFromTree)
        }
      }
      // The op log changed: stage its new bytes.
      scan.files.removeAll { $0.path == logPath }
      // A stale-stat refresh of the old bytes must not stage over the new ones.
      scan.refresh.removeAll { $0.path == logPath }
      scan.files.append((logPath, try FileSystem.read(opLogPath)))
    }
    var summary = CommitSummary(
      commit: nil, documents: scan.documents.count, syntheticOps: synthetic.count, problems: scan.problems)
    // Many new objects go into one pack; a few stay loose, as git would.
    let objects = scan.documents.count + scan.files.count
    func write(_ repository: GitRepository) throws -> (GitOID?, GitIndex?) {
      if let file = plan?.indexFile {
        return (
          try writeCommit(
            scan, repository: repository, index: file, head: head, headTree: headTree, message: message), nil
        )
      }
      return try writeCommit(scan, repository: repository, head: head, headTree: headTree, message: message)
    }
    let (commit, stagedIndex): (GitOID?, GitIndex?)
    if objects > Store.packThreshold {
      (commit, stagedIndex) = try GitRepository.withPackedWrites(workTree: rootPath) { try write($0) }
    } else {
      (commit, stagedIndex) = try write(repository)
    }
    // The index and the ref change only once the objects are on disk. An
    // index nothing was staged in is not rewritten (megabytes for a large
    // table, at every sync).
    let staged = objects + scan.refresh.count + scan.evicted.count
    if let stagedIndex, staged > 0 || commit != nil { try stagedIndex.write() }
    if let commit {
      try repository.setReference(try repository.headBranch(), to: commit, message: "folio commit")
      summary.commit = commit.description
    }
    // The log segment is committed whole: past its size, the next op
    // starts a new one, and this one is never written again.
    let newSegment = opLogSegments.sealIfFull()
    let tree = try commit.map { try repository.commit($0).tree() } ?? headTree
    saveStateAfterCommit(
      scan, head: commit ?? head?.id, tree: tree, token: answer?.token, sealedLog: newSegment,
      repository: repository)
    return summary
  }

  /// Saves what the next scan starts from: git's index now holds exactly
  /// HEAD's tree, with the documents left out still to look at, and this
  /// replica's op log as committed (unless its segment was just sealed).
  private func saveStateAfterCommit(
    _ scan: PendingScan, head: GitOID?, tree: GitTree?, token: String?, sealedLog: Bool,
    repository: GitRepository
  ) {
    guard let checksum = Self.indexChecksum(repository.gitDirectory + "/index") else { return }
    let logPath = Store.opsFolder + "/" + opLogName
    var ownLog: WorkTreeState.CommittedLog?
    var st = stat()
    if !sealedLog, let blob = tree?.blobID(at: logPath), lstat(opLogPath, &st) == 0 {
      let size = scan.files.first { $0.path == logPath }?.bytes?.count ?? Int(st.st_size)
      ownLog = WorkTreeState.CommittedLog(inode: UInt64(st.st_ino), size: size, blob: blob.description)
    }
    saveWorkTreeState(
      WorkTreeState(
        head: head?.description, index: checksum, token: token, dirty: scan.leftOut, ownLog: ownLog))
  }

  /// Which files the next scan must look at, from the state the last one
  /// left and what a publisher saw change since; also the state, and the
  /// publisher's answer (whose token the next state keeps).
  func scanPlan(head: GitOID?, repository: GitRepository) -> (ScanPlan?, WorkTreeState?, ChangedFiles?) {
    let indexPath = repository.gitDirectory + "/index"
    let prior = currentWorkTreeState(head: head, repository: repository)
    let answer = changedFiles(since: prior?.token) { GitIndexFile.entryCount(indexPath) }
    guard let prior else {
      IndexDebug.log("scan: every file checked (no state git's index and HEAD still match)")
      return (nil, nil, answer)
    }
    var plan = ScanPlan(candidates: [:], indexFile: nil, ownLog: prior.ownLog)
    guard prior.token != nil, let answer, !answer.changed.isEmpty,
      let file = try? GitIndexFile.open(indexPath), SHA1.hex(file.checksum) == prior.index
    else {
      IndexDebug.log(
        "scan: every file checked (\(answer == nil ? "no publisher answered" : "the publisher's journal has no token of ours yet"))"
      )
      return (plan, prior, answer)
    }
    plan.indexFile = file
    for table in config.tables {
      guard let names = answer.changed[table.name] else {
        IndexDebug.log("scan: table \(table.name): every file checked (the journal cannot vouch for it)")
        continue
      }
      plan.candidates[table.name] = Set(names).union(prior.dirty[table.name] ?? [])
      IndexDebug.log(
        "scan: table \(table.name): \(plan.candidates[table.name]!.count) file(s) the journal named")
    }
    return (plan, prior, answer)
  }

  /// Writes the scan's blobs, HEAD's tree with their paths changed, and
  /// git's index as `index` (which holds HEAD's tree) with the same paths
  /// changed; then the commit object. The caller moves the ref. Only the
  /// trees along the changed paths are read and written, and the index is
  /// copied around its changed entries.
  private func writeCommit(
    _ scan: PendingScan, repository: GitRepository, index: GitIndexFile, head: GitCommit?, headTree: GitTree?,
    message: String?
  ) throws -> GitOID? {
    var changes: [(path: String, id: GitOID?, mode: UInt32)] = []
    var edits: [String: GitIndex.Edit] = [:]
    for file in scan.documents.map({ (path: $0.path, bytes: $0.bytes) }) + scan.files {
      if let bytes = file.bytes {
        let id = try repository.writeBlob(bytes)
        changes.append((file.path, id, 0))
        edits[file.path] = GitIndex.Edit(
          path: file.path, entry: GitIndex.entry(id: id, filePath: rootPath + "/" + file.path))
      } else {
        // A document made since HEAD and removed again is not in the tree.
        if headTree?.entry(at: file.path) != nil { changes.append((file.path, nil, 0)) }
        edits[file.path] = GitIndex.Edit(path: file.path, entry: nil)
      }
    }
    for entry in scan.refresh where edits[entry.path] == nil {
      edits[entry.path] = GitIndex.Edit(
        path: entry.path, entry: GitIndex.entry(id: entry.id, filePath: rootPath + "/" + entry.path))
    }
    for entry in scan.evicted where edits[entry.path] == nil {
      edits[entry.path] = GitIndex.Edit(
        path: entry.path, entry: GitIndex.entry(id: entry.id, filePath: nil, skipWorktree: true))
    }
    let tree = changes.isEmpty ? headTree?.id : try repository.updatedTree(headTree, setting: changes)
    if !edits.isEmpty {
      let ordered = edits.values.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
      try index.write(
        to: repository.gitDirectory + "/index", applying: ordered, policy: repository.splitIndexPolicy)
    }
    guard let tree, tree != headTree?.id else { return nil }
    let text = message ?? defaultCommitMessage(scan.documents)
    return try repository.createCommit(tree: tree, parents: head.map { [$0.id] } ?? [], message: text)
  }

  /// Above this many changed files a commit writes a pack.
  static let packThreshold = 64

  /// Stages the scan's files in the index and writes the tree and the
  /// commit object; the caller saves the index and moves the ref.
  private func writeCommit(
    _ scan: PendingScan, repository: GitRepository, head: GitCommit?, headTree: GitTree?, message: String?
  ) throws -> (GitOID?, GitIndex?) {
    let index = try repository.index()
    for file in scan.documents.map({ (path: $0.path, bytes: $0.bytes) }) + scan.files {
      if let bytes = file.bytes {
        try index.add(
          path: file.path, id: try repository.writeBlob(bytes), filePath: rootPath + "/" + file.path)
      } else {
        try index.remove(path: file.path)
      }
    }
    for entry in scan.refresh {
      try index.add(path: entry.path, id: entry.id, filePath: rootPath + "/" + entry.path)
    }
    for entry in scan.evicted {
      try index.add(path: entry.path, id: entry.id, filePath: nil, skipWorktree: true)
    }
    let tree = try index.writeTree(to: repository)
    if let headTree, headTree.id == tree { return (nil, index) }
    let text = message ?? defaultCommitMessage(scan.documents)
    return (
      try repository.createCommit(tree: tree, parents: head.map { [$0.id] } ?? [], message: text), index
    )
  }

  /// What `folio commit` would do, without doing it.
  public func status() throws -> StoreStatus {
    try lock.withLock { try statusLocked() }
  }

  /// ``status()`` with the lock held.
  func statusLocked() throws -> StoreStatus {
    // A pending transaction that cannot be completed yet does not stop
    // status: it is shown (``pendingRecoveryError``).
    recoverForReading()
    let repository = try openRepository()
    let head = try repository.headCommit()
    let (plan, prior, answer) = scanPlan(head: head?.id, repository: repository)
    let scan = try scanPending(
      repository: repository, headTree: try head?.tree(), index: { try repository.index() }, plan: plan)
    // Status writes nothing git reads: the state holds, with what this
    // scan found still to commit.
    if var state = prior {
      state.token = answer?.token
      state.dirty = scan.dirty
      saveWorkTreeState(state)
    } else if answer != nil, let file = try? GitIndexFile.open(repository.gitDirectory + "/index"),
      (try? file.holds(try head?.tree(), repository: repository)) == true
    {
      // Git's index was written by someone else (a `git pull`, a
      // `git reset`), and holds HEAD: the next status starts from here.
      saveWorkTreeState(
        WorkTreeState(
          head: head?.id.description, index: SHA1.hex(file.checksum), token: answer?.token,
          dirty: scan.dirty,
          ownLog: nil))
    }
    var tables: [StoreStatus.Table] = []
    for table in heldTables {
      let documents = scan.documents.filter { $0.table.name == table.name }
      tables.append(
        StoreStatus.Table(
          name: table.name,
          pendingOps: scan.ownOps.filter { $0.key.table == table.name }.reduce(0) { $0 + $1.value.count },
          changedDocuments: documents.map(\.pk).sorted(),
          externalEdits: documents.filter { $0.synthetic != nil }.map(\.pk).sorted(),
          evicted: (scan.evictedByTable[table.name] ?? []).sorted().map(\.string)))
    }
    var status = StoreStatus(
      tables: tables, problems: scan.problems, branch: (try? repository.headBranch()) ?? "HEAD",
      head: head?.id.description)
    status.absentTables = absentTables.map(\.name).sorted()
    status.schemaViolations =
      config.tables.compactMap(\.missingSchemaError)
      + (try schemaViolations(scan: scan, headTree: try head?.tree(), repository: repository))
    return status
  }

  package func openRepository() throws -> GitRepository {
    guard let repository = try GitRepository.open(workTree: rootPath) else {
      throw FolioError(.git, "\(rootPath) is not a git working tree", path: rootPath, remedy: .createStore)
    }
    return repository
  }

  private func defaultCommitMessage(_ documents: [PendingDocument]) -> String {
    var counts: [String: Int] = [:]
    for document in documents { counts[document.table.name, default: 0] += 1 }
    if counts.isEmpty { return "folio: op log" }
    let parts = counts.keys.sorted().map { "\(counts[$0]!) in \($0)" }
    return "folio: " + parts.joined(separator: ", ")
  }

  /// The ops this replica logged since HEAD, by document. With `known`
  /// (the log as last committed, from ``WorkTreeState``) and the same file
  /// still growing from it, only the bytes after the committed length are
  /// read.
  func uncommittedOwnOps(
    headTree: GitTree?, repository: GitRepository, known: WorkTreeState.CommittedLog? = nil
  ) throws -> [OpHistory.DocumentKey: [Op]] {
    let name = opLogName
    let headBlob = headTree?.blobID(at: Store.opsFolder + "/" + name)
    if let known, headBlob?.description == known.blob, let tail = try Self.readTail(opLogPath, known) {
      return try OpHistory(files: [name: tail]).ops(since: OpHistory(files: [name: []]))
    }
    let committed = try headBlob.map { try repository.blob($0) } ?? []
    let current = try FileSystem.read(opLogPath) ?? []
    return try OpHistory(files: [name: current]).ops(since: OpHistory(files: [name: committed]))
  }

  /// The bytes of the file at `path` after `known.size`, when it is still
  /// the file `known` describes (same inode, no shorter); nil otherwise.
  static func readTail(_ path: String, _ known: WorkTreeState.CommittedLog) throws -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, UInt64(st.st_ino) == known.inode, Int(st.st_size) >= known.size,
      lseek(fd, off_t(known.size), SEEK_SET) == off_t(known.size)
    else { return nil }
    return try FileSystem.readAll(fd, path: path)
  }

  /// Compares the working tree's Folio files with HEAD. Stat data from the
  /// index decides which files to read; only those are hashed.
  package func scanPending(repository: GitRepository, headTree: GitTree?, index: GitIndex) throws
    -> PendingScan
  {
    try scanPending(repository: repository, headTree: headTree, index: { index }, plan: nil)
  }

  /// The same, looking only at `plan`'s candidates in the tables it names
  /// (see ``WorkTreeState``), and loading libgit2's index only for the
  /// tables it does not.
  package func scanPending(
    repository: GitRepository, headTree: GitTree?, index loadIndex: @escaping () throws -> GitIndex,
    plan: ScanPlan?
  ) throws -> PendingScan {
    var scan = PendingScan()
    scan.ownOps = try uncommittedOwnOps(headTree: headTree, repository: repository, known: plan?.ownLog)
    scan.evictedByTable = try evictions.load()
    let scanner = PendingScanner(
      store: self, repository: repository, headTree: headTree, plan: plan, loadIndex: loadIndex, scan: scan)
    // A partial replica's absent tables have no files here, and no change.
    for table in heldTables { try scanner.scanTable(table) }
    try scanner.scanOtherFiles()
    return scanner.scan
  }

  static func statMatches(_ entry: GitIndex.Entry, _ st: stat) -> Bool {
    entry.size == UInt32(truncatingIfNeeded: st.st_size)
      && entry.mtimeSeconds == Int32(truncatingIfNeeded: st.st_mtim.tv_sec)
      && entry.mtimeNanoseconds == UInt32(truncatingIfNeeded: st.st_mtim.tv_nsec)
      && entry.inode == UInt32(truncatingIfNeeded: st.st_ino)
  }
}
