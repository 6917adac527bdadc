import FolioCore
import FolioJSON
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

  /// ``commit(message:)`` through `repository` when given: a sync keeps
  /// one handle, so the index it reads here serves its checkout too.
  func commit(message: String?, repository: GitRepository?) throws -> CommitSummary {
    try lock.withLock {
      try recoverBeforeWrite()
      let concluded = try finishGitMergeLocked() != nil ? try openRepository().headCommit()?.id : nil
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
    let index = try repository.index()
    // A shared handle may hold the index from before another wrote it.
    try index.readFromDisk()
    var scan = try scanPending(repository: repository, headTree: headTree, index: index)
    let synthetic = scan.documents.filter { $0.synthetic != nil }
    if !synthetic.isEmpty {
      try writeLocked { transaction in
        for document in synthetic {
          transaction.log(
            document.synthetic!, table: document.table, pk: document.pk, fromTree: document.syntheticFromTree)
        }
      }
      // The op log changed: stage its new bytes.
      let logPath = Store.opsFolder + "/" + replicaID + ".ndjson"
      scan.files.removeAll { $0.path == logPath }
      // A stale-stat refresh of the old bytes must not stage over the new ones.
      scan.refresh.removeAll { $0.path == logPath }
      scan.files.append((logPath, try FileSystem.read(opLogPath)))
    }
    var summary = CommitSummary(
      commit: nil, documents: scan.documents.count, syntheticOps: synthetic.count, problems: scan.problems)
    // Many new objects go into one pack; a few stay loose, as git would.
    let objects = scan.documents.count + scan.files.count
    let (commit, stagedIndex): (GitOID?, GitIndex)
    if objects > Store.packThreshold {
      (commit, stagedIndex) = try GitRepository.withPackedWrites(workTree: rootPath) { repository in
        try writeCommit(scan, repository: repository, head: head, headTree: headTree, message: message)
      }
    } else {
      (commit, stagedIndex) = try writeCommit(
        scan, repository: repository, head: head, headTree: headTree, message: message)
    }
    // The index and the ref change only once the objects are on disk. An
    // index nothing was staged in is not rewritten (megabytes for a large
    // table, at every sync).
    let staged = objects + scan.refresh.count + scan.evicted.count
    if staged > 0 || commit != nil { try stagedIndex.write() }
    if let commit {
      try repository.setReference(try repository.headBranch(), to: commit, message: "folio commit")
      summary.commit = commit.description
    }
    return summary
  }

  /// Above this many changed files a commit writes a pack.
  static let packThreshold = 64

  /// Stages the scan's files in the index and writes the tree and the
  /// commit object; the caller saves the index and moves the ref.
  private func writeCommit(
    _ scan: PendingScan, repository: GitRepository, head: GitCommit?, headTree: GitTree?, message: String?
  ) throws -> (GitOID?, GitIndex) {
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
    try lock.withLock {
      // A pending transaction that cannot be completed yet does not stop
      // status: it is shown (``pendingRecoveryError``).
      recoverForReading()
      let repository = try openRepository()
      let head = try repository.headCommit()
      let scan = try scanPending(
        repository: repository, headTree: try head?.tree(), index: try repository.index())
      var tables: [StoreStatus.Table] = []
      for table in config.tables {
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
      status.schemaViolations =
        config.tables.compactMap(\.missingSchemaError)
        + (try schemaViolations(scan: scan, headTree: try head?.tree(), repository: repository))
      return status
    }
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

  /// The ops this replica logged since HEAD, by document.
  func uncommittedOwnOps(headTree: GitTree?, repository: GitRepository) throws -> [OpHistory.DocumentKey:
    [Op]]
  {
    let name = replicaID + ".ndjson"
    let committed =
      try headTree?.blobID(at: Store.opsFolder + "/" + name).map { try repository.blob($0) } ?? []
    let current = try FileSystem.read(opLogPath) ?? []
    return try OpHistory(files: [name: current]).ops(since: OpHistory(files: [name: committed]))
  }

  /// Compares the working tree's Folio files with HEAD. Stat data from the
  /// index decides which files to read; only those are hashed.
  package func scanPending(repository: GitRepository, headTree: GitTree?, index: GitIndex) throws
    -> PendingScan
  {
    var scan = PendingScan()
    scan.ownOps = try uncommittedOwnOps(headTree: headTree, repository: repository)
    scan.evictedByTable = try loadEvictions()

    /// The file's bytes when it differs from `headID`; nil when it is the same.
    func changedBytes(_ path: String, headID: GitOID?) throws -> [UInt8]?? {
      let absolute = rootPath + "/" + path
      var st = stat()
      guard lstat(absolute, &st) == 0 else { return .some(nil) }  // deleted
      if let headID, let entry = index.entry(at: path), entry.id == headID, Self.statMatches(entry, st) {
        return nil
      }
      guard let bytes = try FileSystem.read(absolute) else { return .some(nil) }
      let id = try GitRepository.hashBlob(bytes)
      if id == headID {
        scan.refresh.append((path, id))
        return nil
      }
      return .some(bytes)
    }

    for table in config.tables {
      // Most folders are as committed: that is decided cheaply, and only
      // documents Folio wrote since HEAD are left to look at.
      let unchanged = try folderMatchesHead(
        table, headTree: headTree, index: index, repository: repository,
        evicted: scan.evictedByTable[table.name] ?? [])
      var headBlobs: [String: GitOID] = [:]
      var names: [String] = []
      if !unchanged {
        headBlobs = Dictionary(
          (try headTree?.blobs(in: table.path, repository: repository) ?? []).map { ($0.name, $0.id) },
          uniquingKeysWith: { a, _ in a })
        names = try FileSystem.list(directory(of: table)) ?? []
      }
      var present = Set<String>()
      for name in names {
        guard name.hasSuffix(".json"), !name.hasPrefix("."), let pk = PrimaryKey.pk(fromFileName: name) else {
          continue
        }
        present.insert(name)
        let path = table.path + "/" + name
        do {
          // A link is reported (UNSAFE_PATH) and never read through.
          guard let change = try changedBytes(path, headID: headBlobs[name]), let bytes = change else {
            continue
          }
          // An edit past the size limit is reported and not recorded, as
          // `folio watch` does: another replica's merge could not read it.
          if let problem = sizeProblem(bytes.count, table: table, path: path) { throw problem }
          let object = try parseEditedDocument(bytes, table: table, pk: pk, path: path)
          let expected = try knownDocument(
            table: table, pk: pk, path: path, headBlob: headBlobs[name],
            ownOps: scan.ownOps[OpHistory.DocumentKey(table: table.name, pk: pk)] ?? [],
            repository: repository)
          var pending = PendingDocument(table: table, pk: pk, path: path, bytes: bytes, document: object)
          // An import's compact op says "the file is the content" (Op.fromTree).
          let key = OpHistory.DocumentKey(table: table.name, pk: pk)
          let fromTree = scan.ownOps[key]?.contains(where: \.fromTree) ?? false
          if expected == nil && headBlobs[name] == nil && !fromTree {
            // A new file: its body goes into the commit anyway, so the log
            // records only that it was inserted, and merges read the body
            // from the tree.
            pending.synthetic = Mutation(kind: .insert)
            pending.syntheticFromTree = true
          } else if !fromTree && !DocumentResolver.same(expected, object) {
            pending.synthetic = Mutation.diff(from: expected, to: object, kinds: table.kind(of:))
          }
          scan.documents.append(pending)
        } catch let error as FolioError {
          scan.problems.append(error)
        }
      }
      for (name, id) in headBlobs where !present.contains(name) && name.hasSuffix(".json") {
        guard let pk = PrimaryKey.pk(fromFileName: name) else { continue }
        let path = table.path + "/" + name
        if scan.evictedByTable[table.name]?.contains(ExactKey(pk)) == true {
          if index.entry(at: path)?.skipWorktree != true { scan.evicted.append((path, id)) }
          continue
        }
        let expected = try knownDocument(
          table: table, pk: pk, path: path, headBlob: id,
          ownOps: scan.ownOps[OpHistory.DocumentKey(table: table.name, pk: pk)] ?? [], repository: repository)
        var pending = PendingDocument(table: table, pk: pk, path: path, bytes: nil, document: nil)
        if expected != nil { pending.synthetic = Mutation(kind: .remove) }
        scan.documents.append(pending)
      }
      // Made through Folio since HEAD, then deleted by hand: a remove.
      for key in scan.ownOps.keys where key.table == table.name {
        guard let name = try? PrimaryKey.fileName(for: key.pk),
          unchanged
            ? index.entry(at: table.path + "/" + name) == nil
            : !present.contains(name) && headBlobs[name] == nil,
          scan.evictedByTable[table.name]?.contains(ExactKey(key.pk)) != true
        else { continue }
        let path = table.path + "/" + name
        let expected = try knownDocument(
          table: table, pk: key.pk, path: path, headBlob: nil, ownOps: scan.ownOps[key]!,
          repository: repository)
        guard expected != nil else { continue }
        var pending = PendingDocument(table: table, pk: key.pk, path: path, bytes: nil, document: nil)
        pending.synthetic = Mutation(kind: .remove)
        scan.documents.append(pending)
      }
    }
    // Folio's other committed files.
    // The schema files folio.yaml names travel with it: a clone without
    // them could not check a write.
    var others = [Config.fileName, ".gitattributes"] + config.tables.compactMap(\.schemaFile)
    let logNames = Set(
      (try FileSystem.list(rootPath + "/" + Store.opsFolder) ?? []).filter { $0.hasSuffix(".ndjson") }
        + (try headTree?.blobs(in: Store.opsFolder, repository: repository) ?? []).map(\.name))
    others += logNames.sorted().map { Store.opsFolder + "/" + $0 }
    for path in others {
      let headID = headTree?.blobID(at: path)
      if let change = try changedBytes(path, headID: headID) {
        if change == nil && headID == nil { continue }
        scan.files.append((path, change))
      }
    }
    return scan
  }

  static func statMatches(_ entry: GitIndex.Entry, _ st: stat) -> Bool {
    entry.size == UInt32(truncatingIfNeeded: st.st_size)
      && entry.mtimeSeconds == Int32(truncatingIfNeeded: st.st_mtim.tv_sec)
      && entry.mtimeNanoseconds == UInt32(truncatingIfNeeded: st.st_mtim.tv_nsec)
      && entry.inode == UInt32(truncatingIfNeeded: st.st_ino)
  }
}
