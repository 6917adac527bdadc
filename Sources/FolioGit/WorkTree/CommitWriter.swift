internal import Clibgit2
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Writes a commit of what changed in the working tree: the scan's
/// documents and files as blobs, synthetic ops for edits made without
/// Folio, the tree, git's index and the branch; then the state the next
/// scan starts from (``WorkTreeState``).
package struct CommitWriter {
  /// The store committed.
  let store: Store

  /// A writer for `store`.
  package init(store: Store) { self.store = store }

  /// ``commit(message:)`` through `repository` when given: a sync keeps
  /// one handle, so the index it reads here serves its checkout too.
  func commit(message: String?, repository: GitRepository?) throws -> CommitSummary {
    try store.lock.withLock {
      try store.recoverBeforeWrite()
      let concluded =
        try StoppedGitMerge(store: store).finishLocked() != nil
        ? try store.openRepository().headCommit()?.id : nil
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
    try store.writeGitAttributes()
    let repository = try shared ?? store.openRepository()
    let head = try repository.headCommit()
    let headTree = try head?.tree()
    let (plan, _, answer) = WorkTreeScan(store: store).scanPlan(head: head?.id, repository: repository)
    var scan = try WorkTreeScan(store: store).scanPending(
      repository: repository, headTree: headTree,
      index: {
        let index = try repository.index()
        // A shared handle may hold the index from before another wrote it.
        try index.readFromDisk()
        return index
      }, plan: plan)
    let logPath = Store.opsFolder + "/" + store.opLogName
    let synthetic = scan.documents.filter { $0.synthetic != nil }
    if !synthetic.isEmpty {
      try store.writeLocked { transaction in
        for document in synthetic {
          transaction.log(
            document.synthetic!, table: document.table, pk: document.pk, fromTree: document.syntheticFromTree)
        }
      }
      // The op log changed: stage its new bytes.
      scan.files.removeAll { $0.path == logPath }
      // A stale-stat refresh of the old bytes must not stage over the new ones.
      scan.refresh.removeAll { $0.path == logPath }
      scan.files.append((logPath, try FileSystem.read(store.opLogPath)))
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
    if objects > Self.packThreshold {
      (commit, stagedIndex) = try GitRepository.withPackedWrites(workTree: store.rootPath) { try write($0) }
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
    let newSegment = store.opLogSegments.sealIfFull()
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
    guard let checksum = WorkTreeScan.indexChecksum(repository.gitDirectory + "/index") else { return }
    let logPath = Store.opsFolder + "/" + store.opLogName
    var ownLog: WorkTreeState.CommittedLog?
    var st = stat()
    if !sealedLog, let blob = tree?.blobID(at: logPath), lstat(store.opLogPath, &st) == 0 {
      let size = scan.files.first { $0.path == logPath }?.bytes?.count ?? Int(st.st_size)
      ownLog = WorkTreeState.CommittedLog(inode: UInt64(st.st_ino), size: size, blob: blob.description)
    }
    WorkTreeScan(store: store).saveWorkTreeState(
      WorkTreeState(
        head: head?.description, index: checksum, token: token, dirty: scan.leftOut, ownLog: ownLog))
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
          path: file.path, entry: GitIndex.entry(id: id, filePath: store.rootPath + "/" + file.path))
      } else {
        // A document made since HEAD and removed again is not in the tree.
        if headTree?.entry(at: file.path) != nil { changes.append((file.path, nil, 0)) }
        edits[file.path] = GitIndex.Edit(path: file.path, entry: nil)
      }
    }
    for entry in scan.refresh where edits[entry.path] == nil {
      edits[entry.path] = GitIndex.Edit(
        path: entry.path, entry: GitIndex.entry(id: entry.id, filePath: store.rootPath + "/" + entry.path))
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
          path: file.path, id: try repository.writeBlob(bytes), filePath: store.rootPath + "/" + file.path)
      } else {
        try index.remove(path: file.path)
      }
    }
    for entry in scan.refresh {
      try index.add(path: entry.path, id: entry.id, filePath: store.rootPath + "/" + entry.path)
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

  private func defaultCommitMessage(_ documents: [PendingDocument]) -> String {
    var counts: [String: Int] = [:]
    for document in documents { counts[document.table.name, default: 0] += 1 }
    if counts.isEmpty { return "folio: op log" }
    let parts = counts.keys.sorted().map { "\(counts[$0]!) in \($0)" }
    return "folio: " + parts.joined(separator: ", ")
  }
}
