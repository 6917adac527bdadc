import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// Commits that change a table, or the op logs, as a whole: a table's
/// rename, its conversion to another layout, and the compaction of the op
/// logs. Each commits what is pending first, then makes one commit and
/// moves the working tree, git's index and the branch to it, as a sync's
/// checkout does. ``Store``'s `renameTable`, `setLayout` and `compact`
/// hand their calls here.
struct TableChanges {
  let store: Store

  /// ``Store/renameTable``.
  func renameTable(_ old: String, to new: String) throws -> (store: Store, commit: String) {
    let commit: GitOID = try store.lock.withLock {
      try store.recoverBeforeWrite()
      let table = try store.table(named: old)
      // Conflict records name the table; settled first, none is orphaned.
      let open = try store.conflicts(table: old).count
      if open > 0 {
        throw FolioError(
          .conflict,
          "table '\(old)' has \(open) open conflict(s); settle them first (see 'folio conflicts \(old)'), then rename",
          table: old)
      }
      let (repository, head) = try commitPending(before: "rename", table: table)
      let headTree = try head.tree()
      let (newText, renamed) = try ConfigEditor(text: try store.configText()).renaming(table: old, to: new)
      var changes = try configFileChanges(newText, repository: repository)
      if renamed.path != table.path {
        if try headTree.subtree(at: renamed.path, repository: repository) != nil
          || !(try FileSystem.list(store.rootPath + "/" + renamed.path) ?? []).isEmpty
        {
          throw FolioError(
            .wouldOverwrite,
            "the folder '\(renamed.path)' is not empty; move what is there aside, then rename",
            path: renamed.path)
        }
        if let folder = try headTree.subtree(at: table.path, repository: repository) {
          changes += [(renamed.path, folder.id, 0o040000), (table.path, nil, 0)]
        }
      }
      let tree = try repository.updatedTree(headTree, setting: changes)
      return try commitWholeTableChange(
        tree, onto: head, message: "folio: rename table '\(old)' to '\(new)'", verb: ("renaming", "rename"),
        repository: repository)
    }
    return (try Store(rootPath: store.rootPath, wiring: store.wiring), commit.description)
  }

  /// ``Store/setLayout``.
  func setLayout(_ layout: TableLayout, of name: String) throws -> (store: Store, commit: String?) {
    let commit: GitOID? = try store.lock.withLock {
      try store.recoverBeforeWrite()
      let table = try store.table(named: name)
      if table.layout == layout { return nil }
      let (repository, head) = try commitPending(before: "convert", table: table)
      let newText = try ConfigEditor(text: try store.configText()).setting(layout: layout, of: name)
      let moved = try repository.relayingOut(
        try head.tree(), folder: table.path, from: table.layout, to: layout)
      let tree = try repository.updatedTree(
        try repository.tree(moved), setting: try configFileChanges(newText, repository: repository))
      let commit = try commitWholeTableChange(
        tree, onto: head, message: "folio: table '\(name)' to the \(layout.rawValue) layout",
        verb: ("converting", "convert"), repository: repository)
      // The checkout empties the old layout's folders the new one does not
      // use; a table's folder holds only documents and its layout's
      // folders (`fsck`).
      table.layout.removeEmptyFolders(in: store.directory(of: table))
      return commit
    }
    return (try Store(rootPath: store.rootPath, wiring: store.wiring), commit?.description)
  }

  /// ``Store/compact``.
  func compact(message: String?) throws -> CompactionSummary {
    try store.lock.withLock {
      try store.recoverBeforeWrite()
      _ = try CommitWriter(store: store).commitLocked(message: nil)
      let repository = try store.openRepository()
      var summary = CompactionSummary(mergedEverywhere: nil, droppedOps: 0, keptOps: 0, commit: nil)
      guard let head = try repository.headCommit()?.id else { return summary }
      var common: GitOID? = head
      let references =
        try repository.references(prefix: "refs/heads/") + repository.references(prefix: "refs/remotes/")
      for reference in references where !reference.hasSuffix("/HEAD") {
        guard let id = try repository.referenceID(reference), let current = common else { continue }
        common = try repository.mergeBases(current, id).first
      }
      guard let common else { return summary }
      summary.mergedEverywhere = common.description
      let merged = try OpHistory(tree: try repository.commit(common).tree(), repository: repository)
      var known = Set<HLC>()
      for (name, bytes) in try merged.files {
        for op in try OpHistory.parse(bytes[...], file: Store.opsFolder + "/" + name) { known.insert(op.hlc) }
      }
      // Local stamps must stay ahead of the ops that leave the log.
      if let latest = try lastCommittedStamp() { try store.clock.observe(remoteStamp: latest) }
      let directory = store.rootPath + "/" + Store.opsFolder
      for name in (try FileSystem.list(directory) ?? []).sorted() where name.hasSuffix(".ndjson") {
        let path = directory + "/" + name
        let bytes = try FileSystem.read(path) ?? []
        var kept: [UInt8] = []
        var dropped = 0
        for line in OpLogMerge.lines(bytes) {
          if let op = try? Op(json: JSONValue(parsing: line)), known.contains(op.hlc) {
            dropped += 1
          } else {
            kept += line
            kept.append(UInt8(ascii: "\n"))
            summary.keptOps += 1
          }
        }
        if dropped > 0 {
          try FileSystem.writeAtomically(path, kept, sync: true, under: store.rootPath)
          summary.droppedOps += dropped
        }
      }
      store.clock.reset()
      if summary.droppedOps > 0 {
        summary.commit = try CommitWriter(store: store).commitLocked(
          message: message ?? "folio: compact op logs (\(summary.droppedOps) ops merged everywhere)"
        ).commit
      }
      return summary
    }
  }

  /// The newest stamp in this replica's own log.
  private func lastCommittedStamp() throws -> HLC? {
    try OpLog.lastOp(in: store.opLogPath)?.hlc
  }

  /// Commits what is pending before one commit that changes `table` as a
  /// whole (a rename, a conversion), with the lock held.
  /// - Returns: the repository and the commit to build on.
  /// - Throws: `WOULD_OVERWRITE` when a file of the table cannot be
  ///   committed; `GIT` when the store has no commit yet.
  func commitPending(before verb: String, table: TableConfig) throws -> (GitRepository, GitCommit) {
    let summary = try CommitWriter(store: store).commitLocked(message: nil)
    let broken = summary.problems.filter {
      ($0.location?.file ?? $0.path ?? "").hasPrefix(table.path + "/")
    }
    if let first = broken.first {
      throw FolioError(
        .wouldOverwrite,
        "table '\(table.name)' has a file that cannot be committed (\(first.headline)); fix or remove it, then \(verb)",
        table: table.name)
    }
    let repository = try store.openRepository()
    guard let head = try repository.headCommit() else {
      throw FolioError(.git, "the store has no commit yet; commit before you \(verb) a table")
    }
    return (repository, head)
  }

  /// The changes that set `folio.yaml` to `text` and `.gitattributes` to
  /// what its tables need, for a commit that changes a table as a whole.
  func configFileChanges(_ text: String, repository: GitRepository) throws -> [(
    path: String, id: GitOID?, mode: UInt32
  )] {
    let config = try Config(yaml: text)
    let attributes = String(
      decoding: try FileSystem.read(store.rootPath + "/.gitattributes") ?? [], as: UTF8.self)
    let changes: [(path: String, id: GitOID?, mode: UInt32)] = [
      (Config.fileName, try repository.writeBlob(Array(text.utf8)), 0),
      (
        ".gitattributes",
        try repository.writeBlob(
          Array(Store.gitAttributes(existing: attributes, tables: config.tables).utf8)),
        0
      ),
    ]
    return changes
  }

  /// Commits `tree` onto `head`, the change to a table as a whole, and
  /// moves the working tree, git's index and the branch to it, as a sync's
  /// checkout does.
  /// - Parameter verb: the change's name in messages, as "converting",
  ///   "convert".
  /// - Throws: `WOULD_OVERWRITE` when a file in the way was changed since
  ///   the last commit.
  func commitWholeTableChange(
    _ tree: GitOID, onto head: GitCommit, message: String, verb: (doing: String, do: String),
    repository: GitRepository
  ) throws -> GitOID {
    let commit = try repository.createCommit(tree: tree, parents: [head.id], message: message)
    let blocked = try Checkout(store: store).checkout(
      commit, branch: try repository.headBranch(), repository: repository)
    if !blocked.isEmpty {
      throw FolioError(
        .wouldOverwrite,
        "\(verb.doing) would overwrite changes to \(blocked.joined(separator: ", ")) made since the last "
          + "commit; fix or commit them, then \(verb.do)", remedy: .showLeftOutFiles)
    }
    return commit
  }
}
