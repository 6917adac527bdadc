import FolioCore
import FolioSystem
import Foundation
import Glibc

/// A partial replica's work with git: which paths a checkout leaves out,
/// the blobs it fetches, git's sparse-checkout file, and widening or
/// narrowing the replica by a table. Which tables it holds is kept by the
/// store (``Store/heldTableNames``).
struct PartialClone {
  /// The replica.
  let store: Store

  /// The paths a checkout leaves out of the working tree and keeps in
  /// git's index marked skip-worktree: evicted documents, and every file of
  /// a table this partial replica does not hold (whose blobs may not even
  /// be here).
  struct OffTreePaths {
    /// Evicted documents' paths.
    var evicted: Set<String>
    /// The folders of the absent tables, each with a trailing `/`.
    var absentFolders: [String]

    func contains(_ path: String) -> Bool {
      evicted.contains(path) || absentFolders.contains { path.hasPrefix($0) }
    }
  }

  /// This replica's ``OffTreePaths`` for a checkout of `target` (whose
  /// `folio.yaml` may add tables: a partial replica does not hold those).
  func offTreePaths(target: GitTree? = nil, repository: GitRepository? = nil) throws -> OffTreePaths {
    OffTreePaths(
      evicted: try store.evictions.paths(),
      absentFolders: absentFolders(alsoIn: target, repository: repository))
  }

  /// The folders (with a trailing `/`) of the tables this partial replica
  /// does not hold: by its `folio.yaml`, and by the one in `tree` when
  /// given, which may define tables this replica has not heard of.
  func absentFolders(alsoIn tree: GitTree?, repository: GitRepository?) -> [String] {
    guard let held = store.heldTableNames else { return [] }
    var folders = Set(store.absentTables.map { $0.path + "/" })
    if let tree, let repository, let id = tree.blobID(at: Config.fileName),
      let incoming = try? Config(bytes: try repository.blob(id), file: Config.fileName)
    {
      for table in incoming.tables
      where !held.contains(table.name) && !table.renamedFrom.contains(where: held.contains) {
        folders.insert(table.path + "/")
      }
    }
    return folders.sorted()
  }

  /// The blobs of `tree` this replica holds the paths of (all but the
  /// absent tables' files) that differ from `old`'s, fetched from `remote`
  /// where this partial clone lacks them: what a checkout and a merge of
  /// `tree` read.
  /// - Returns: how many were fetched.
  @discardableResult
  func fetchHeldBlobs(
    of tree: GitTree, since old: GitTree?, remote: String, repository: GitRepository
  ) throws -> Int {
    try Self.fetchHeldBlobs(
      of: tree, since: old, absentFolders: absentFolders(alsoIn: tree, repository: repository),
      remote: remote,
      repository: repository, sshKey: store.sshKeyPath)
  }

  /// ``fetchHeldBlobs(of:since:remote:repository:)`` for the absent
  /// tables' folders `absentFolders` (each with a trailing `/`).
  @discardableResult
  static func fetchHeldBlobs(
    of tree: GitTree, since old: GitTree?, absentFolders: [String], remote: String,
    repository: GitRepository, sshKey: String?
  ) throws -> Int {
    let wanted = try repository.fileChanges(from: old, to: tree).compactMap { change -> GitOID? in
      guard let id = change.new, change.newMode != TreePathValidator.gitlinkMode,
        !absentFolders.contains(where: { change.path.hasPrefix($0) })
      else { return nil }
      return id
    }
    return try repository.fetchMissing(wanted, remote: remote, sshKey: sshKey)
  }

  /// ``writeSparseCheckout(for:absent:repository:)`` for this replica's
  /// absent tables.
  func writeSparseCheckout(for tree: GitTree, repository: GitRepository) throws {
    try Self.writeSparseCheckout(
      for: tree, absent: Set(store.absentTables.map(\.path)), repository: repository)
  }

  /// Tells plain git which folders this partial replica checks out, in
  /// cone mode (`git sparse-checkout`), so that a `git checkout` or
  /// `git pull` here leaves the absent tables out as Folio does: every
  /// folder of `tree` but the absent tables', and the files at each level.
  static func writeSparseCheckout(for tree: GitTree, absent: Set<String>, repository: GitRepository) throws {
    var lines = ["/*", "!/*/"]
    func add(_ folder: GitTree, prefix: String) throws {
      for (name, id) in folder.subtrees() {
        let path = prefix + name
        if absent.contains(path) { continue }
        if absent.contains(where: { $0.hasPrefix(path + "/") }) {
          // A folder that holds an absent table: its files and the other
          // folders in it, not the whole of it.
          lines += ["/" + path + "/", "!/" + path + "/*/"]
          try add(try repository.tree(id), prefix: path + "/")
        } else {
          lines.append("/" + path + "/")
        }
      }
    }
    try add(tree, prefix: "")
    let info = repository.gitDirectory + "/info"
    try FileSystem.makeDirectories(info)
    try FileSystem.writeAtomically(
      info + "/sparse-checkout", Array(lines.map { $0 + "\n" }.joined().utf8), sync: false)
    try repository.setConfig("core.sparseCheckout", "true")
    try repository.setConfig("core.sparseCheckoutCone", "true")
  }
}

extension PartialClone {
  /// The tables of `config` a partial clone holding `names` leaves out.
  /// - Throws: `UNKNOWN_TABLE` for a name `config` does not define.
  static func absentTables(_ config: Config, holding names: [String]) throws -> [TableConfig] {
    var held = Set<String>()
    for name in names {
      guard let table = config.table(named: name) else { throw config.unknownTableError(name) }
      held.insert(table.name)
    }
    return config.tables.filter { !held.contains($0.name) }
  }

  /// A fresh partial clone's checkout: the files outside `absentFolders`
  /// are written and indexed, and the absent tables' files are indexed
  /// only, marked skip-worktree, so that git sees them as there and
  /// unchanged.
  static func checkOutHeldFiles(_ tree: GitTree, absentFolders: [String], repository: GitRepository) throws {
    var held: [String] = []
    var edits: [GitIndex.Edit] = []
    for change in try repository.fileChanges(from: nil, to: tree) {
      guard let id = change.new else { continue }
      guard absentFolders.contains(where: { change.path.hasPrefix($0) }) else {
        held.append(change.path)
        continue
      }
      edits.append(
        .init(
          path: change.path,
          entry: GitIndex.entry(id: id, filePath: nil, mode: change.newMode, skipWorktree: true)))
    }
    if !held.isEmpty { _ = try repository.checkout(tree: tree, paths: held, force: true) }
    let indexPath = repository.gitDirectory + "/index"
    guard let file = try GitIndexFile.open(indexPath) else {
      throw FolioError(.git, "the clone's checkout wrote no index at \(indexPath)", path: indexPath)
    }
    edits.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    try file.write(to: indexPath, applying: edits, policy: repository.splitIndexPolicy)
  }
}

extension PartialClone {
  /// Widens the replica by table `name` (see ``Store/subscribe(table:)``).
  func subscribe(table name: String) throws {
    guard let table = store.config.table(named: name) else { throw store.config.unknownTableError(name) }
    guard var held = store.heldTableNames, !held.contains(table.name) else { return }
    let folder = table.path + "/"
    while true {
      // Fetched before the lock is taken: a fetch can take minutes.
      let repository = try store.openRepository()
      let head = try repository.headCommit()
      let files = try head.map { try tableFiles(folder, in: try $0.tree(), repository: repository) } ?? []
      let branch = try repository.headBranch()
      let remote = repository.upstream(
        of: branch.hasPrefix("refs/heads/") ? String(branch.dropFirst(11)) : branch, remote: nil
      ).remote
      try repository.fetchMissing(files.map(\.id), remote: remote, sshKey: store.sshKeyPath)
      let done = try store.lock.withLock { () throws -> Bool in
        try store.recoverBeforeWrite()
        let current = try store.openRepository()
        // A sync moved HEAD meanwhile: fetch what it brought first.
        guard try current.headCommit()?.id == head?.id else { return false }
        let evicted = try store.evictions.paths()
        let workTree = WorkTree(root: store.rootPath)
        var edits: [GitIndex.Edit] = []
        for file in files {
          let path = file.path
          if evicted.contains(path) { continue }
          try workTree.write(path, content: try current.blob(file.id), mode: file.mode)
          edits.append(
            .init(
              path: path,
              entry: GitIndex.entry(id: file.id, filePath: store.rootPath + "/" + path, mode: file.mode)
            ))
        }
        try FileSystem.syncFileSystem(containing: store.rootPath)
        try rewriteIndex(applying: edits, repository: current)
        held.insert(table.name)
        try store.saveHeldTableNames(held)
        if let tree = try head?.tree() { try writeSparseCheckout(for: tree, repository: current) }
        return true
      }
      if done { return }
    }
  }

  /// Narrows the replica by table `name` (see ``Store/unsubscribe(table:)``).
  func unsubscribe(table name: String) throws {
    guard let table = store.config.table(named: name) else { throw store.config.unknownTableError(name) }
    var held = store.heldTableNames ?? Set(store.config.tables.map(\.name))
    guard held.contains(table.name) else { return }
    let folder = table.path + "/"
    try store.lock.withLock {
      try store.recoverBeforeWrite()
      if let pending = try WorkTreeScan(store: store).status().tables.first(where: { $0.name == table.name }),
        pending.pendingOps > 0 || !pending.changedDocuments.isEmpty
      {
        throw FolioError(
          .wouldOverwrite,
          "table '\(table.name)' has changes not committed (\(pending.changedDocuments.count) document(s)), "
            + "which leaving it would lose; commit them first (a sync pushes them)",
          table: table.name, remedy: .commitAgain)
      }
      let repository = try store.openRepository()
      let tree = try repository.headCommit()?.tree()
      let files = try tree.map { try tableFiles(folder, in: $0, repository: repository) } ?? []
      // Absent first: from here on a missing file of it is not a deletion.
      held.remove(table.name)
      try store.saveHeldTableNames(held)
      let edits = files.map { file in
        GitIndex.Edit(
          path: file.path,
          entry: GitIndex.entry(id: file.id, filePath: nil, mode: file.mode, skipWorktree: true))
      }
      try rewriteIndex(applying: edits, repository: repository)
      let workTree = WorkTree(root: store.rootPath)
      for file in files { try workTree.remove(file.path) }
      // The folders left empty (a hashed or nested table's, then its
      // own); one that still holds something (an editor's backup) stays.
      let root = store.rootPath + "/" + table.path
      table.layout.removeEmptyFolders(in: root)
      rmdir(root)
      try FileSystem.syncFileSystem(containing: store.rootPath)
      if let tree { try writeSparseCheckout(for: tree, repository: repository) }
    }
  }

  /// The files under `folder` (with its trailing `/`) in `tree`: path,
  /// blob id and git mode.
  private func tableFiles(_ folder: String, in tree: GitTree, repository: GitRepository) throws -> [(
    path: String, id: GitOID, mode: UInt32
  )] {
    guard let subtree = try tree.subtree(at: String(folder.dropLast()), repository: repository) else {
      return []
    }
    return try repository.fileChanges(from: nil, to: subtree).compactMap { change in
      guard let id = change.new, change.newMode != TreePathValidator.gitlinkMode else { return nil }
      return (folder + change.path, id, change.newMode)
    }
  }

  /// Writes git's index with `edits` (any order) applied.
  private func rewriteIndex(applying edits: [GitIndex.Edit], repository: GitRepository) throws {
    let sorted = edits.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    let indexPath = repository.gitDirectory + "/index"
    if let file = try GitIndexFile.open(indexPath) {
      try file.write(to: indexPath, applying: sorted, policy: repository.splitIndexPolicy)
    } else {
      let index = try repository.index()
      try index.readFromDisk()
      try index.writeApplying(sorted, matching: try repository.headCommit()?.tree(), repository: repository)
    }
  }
}
