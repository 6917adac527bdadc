internal import Clibgit2
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Compares the working tree with HEAD: which documents and files changed
/// since the last commit, which of this replica's ops are not committed,
/// and what `folio status` shows. Only what may have changed is read: git's
/// index vouches for files whose stat data it holds, and the index
/// daemon's journal, when one runs, names the candidates.
package struct WorkTreeScan {
  /// The store scanned.
  let store: Store

  /// A scan of `store`.
  package init(store: Store) { self.store = store }

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
    for table in store.config.tables {
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

  /// ``status()`` with the lock held.
  func status() throws -> StoreStatus {
    // A pending transaction that cannot be completed yet does not stop
    // status: it is shown (``Store/pendingRecoveryError``).
    store.recoverForReading()
    let repository = try store.openRepository()
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
    for table in store.heldTables {
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
    status.absentTables = store.absentTables.map(\.name).sorted()
    status.schemaViolations =
      store.config.tables.compactMap(\.missingSchemaError)
      + (try schemaViolations(scan: scan, headTree: try head?.tree(), repository: repository))
    return status
  }

  /// The ops this replica logged since HEAD, by document. With `known`
  /// (the log as last committed, from ``WorkTreeState``) and the same file
  /// still growing from it, only the bytes after the committed length are
  /// read.
  func uncommittedOwnOps(
    headTree: GitTree?, repository: GitRepository, known: WorkTreeState.CommittedLog? = nil
  ) throws -> [OpHistory.DocumentKey: [Op]] {
    let name = store.opLogName
    let headBlob = headTree?.blobID(at: Store.opsFolder + "/" + name)
    if let known, headBlob?.description == known.blob, let tail = try Self.readTail(store.opLogPath, known) {
      return try OpHistory(files: [name: tail]).ops(since: OpHistory(files: [name: []]))
    }
    let committed = try headBlob.map { try repository.blob($0) } ?? []
    let current = try FileSystem.read(store.opLogPath) ?? []
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
    scan.evictedByTable = try store.evictions.load()
    let scanner = PendingScanner(
      store: store, repository: repository, headTree: headTree, plan: plan, loadIndex: loadIndex, scan: scan)
    // A partial replica's absent tables have no files here, and no change.
    for table in store.heldTables { try scanner.scanTable(table) }
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
