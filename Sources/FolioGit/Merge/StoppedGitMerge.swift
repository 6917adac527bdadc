import FolioCore
import FolioSystem
import Foundation

/// A plain `git merge` or `git pull` that stopped (with conflicts, or
/// `--no-commit`) and waits for `folio commit` or `folio sync` to conclude
/// it by replay: what it was merging (`.git/MERGE_HEAD`), and the merge
/// commit `folio sync` would have written, with git's merge state dropped.
struct StoppedGitMerge {
  let store: Store

  /// The commit a stopped `git merge` or `git pull` was merging
  /// (`.git/MERGE_HEAD`), if one is waiting to be concluded.
  func pending() throws -> GitOID? {
    guard let bytes = try FileSystem.read(store.gitDirectory + "/MERGE_HEAD"),
      let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first
    else { return nil }
    return GitOID(hex: String(line))
  }

  /// Concludes a plain `git merge` or `git pull` that stopped with
  /// conflicts (or ran with `--no-commit`), writing the merge commit
  /// `folio sync` would have written.
  /// ``Store/commit(message:)-93boo`` (and so `folio commit` and `folio sync`) calls it
  /// first.
  ///
  /// git runs the merge driver only for content merges: a document removed
  /// on one side and changed on the other stops the merge with
  /// `CONFLICT (modify/delete)`, and no hook runs. This merges HEAD and
  /// `MERGE_HEAD` by replay, commits the result with both parents (and
  /// git's prepared message), and writes every file the merge changed
  /// whole, conflicted ones included; git's merge state is then dropped.
  /// Call with the lock held.
  /// - Returns: the paths written, or nil when no merge was waiting.
  /// - Throws: `WOULD_OVERWRITE` (changing nothing) if a file the merge
  ///   needs was edited since; `CONFLICT` for files outside the tables that
  ///   still conflict.
  func finishLocked() throws -> [String]? {
    guard let theirs = try pending() else { return nil }
    let repository = try store.openRepository()
    guard let head = try repository.headCommit(), head.id != theirs else {
      try dropState()
      return nil
    }
    let index = try repository.index()
    try index.readFromDisk()
    let conflicted = Set(index.entries.filter { $0.stage != 0 }.map(\.path))
    let merge = TreeMerge(repository: repository, config: store.config)
    let result: TreeMerge.Result
    do {
      result = try merge.merge(ours: head.id, theirs: theirs)
    } catch let error as FolioError where error.code == .conflict {
      let files = conflicted.filter { merge.documentAddress($0) == nil && TreeMerge.opLogName($0) == nil }
      throw FolioError(
        .conflict,
        "a git merge of \(theirs.description.prefix(12)) is waiting to be concluded, and "
          + (files.isEmpty ? "files outside Folio's tables" : files.sorted().joined(separator: ", "))
          + " still conflict; resolve them, 'git add' them and run 'git commit' (or 'git merge --abort')")
    }
    let targetTree = try repository.tree(result.tree)
    let (writes, allowed) = try writes(
      from: try head.tree(), theirs: theirs, to: targetTree, index: index, conflicted: conflicted,
      repository: repository)
    let evicted = try PartialClone(store: store).offTreePaths()
    let workTree = WorkTree(root: store.rootPath)
    let blocked = try allowed.keys.filter { path in
      guard !conflicted.contains(path) && !evicted.contains(path) else { return false }
      return !allowed[path]!.contains(try workTree.read(path).map { try GitRepository.hashBlob($0) })
    }
    if !blocked.isEmpty {
      throw FolioError(
        .wouldOverwrite,
        "finishing the git merge would overwrite changes to \(blocked.sorted().joined(separator: ", ")) "
          + "made since; move them aside, then commit again", remedy: .commitAgain)
    }
    let target = try repository.createCommit(
      tree: result.tree, parents: [head.id, theirs], message: try message(theirs: theirs))
    if let latest = result.latestStamp { try store.clock.observe(remoteStamp: latest) }
    // Removals first, deepest first, then writes, so a folder replaced by
    // a file (or the reverse) finds its place free; modes as git keeps them.
    let ordered = writes.sorted { a, b in
      if (a.value == nil) != (b.value == nil) { return a.value == nil }
      return a.value == nil ? a.key > b.key : a.key < b.key
    }
    var modes: [String: UInt32] = [:]
    for (path, id) in ordered where !evicted.contains(path) {
      if let id {
        let mode = targetTree.entry(at: path)?.mode ?? TreePathValidator.blobMode
        modes[path] = mode
        let content = mode == TreePathValidator.gitlinkMode ? [] : try repository.blob(id)
        try workTree.write(path, content: content, mode: mode)
      } else {
        try workTree.remove(path)
      }
    }
    try FileSystem.syncFileSystem(containing: store.rootPath)
    for (path, id) in ordered {
      try? index.remove(path: path)
      if let id {
        let skip = evicted.contains(path)
        try index.add(
          path: path, id: id, filePath: skip ? nil : store.rootPath + "/" + path, skipWorktree: skip,
          mode: modes[path] ?? targetTree.entry(at: path)?.mode)
      }
    }
    try index.write()
    try repository.setReference(try repository.headBranch(), to: target, message: "folio: finish git merge")
    try dropState()
    return writes.keys.sorted()
  }

  /// What finishing the merge writes, each path's blob (nil: removed),
  /// and the versions its file may hold now without being someone's edit.
  private func writes(
    from headTree: GitTree, theirs: GitOID, to targetTree: GitTree, index: GitIndex, conflicted: Set<String>,
    repository: GitRepository
  ) throws -> (writes: [String: GitOID?], allowed: [String: Set<GitOID?>]) {
    var writes: [String: GitOID?] = [:]
    var allowed: [String: Set<GitOID?>] = [:]
    for change in try repository.changes(from: headTree, to: targetTree) {
      writes[change.path] = change.new
      // The file may hold HEAD's version, git's merge of it (staged), or
      // the result already; anything else is someone's edit.
      allowed[change.path] = [change.old, change.new, index.entry(at: change.path)?.id]
    }
    // git's own merge also staged and wrote the paths it merged cleanly,
    // and its verdict may not be replay's (a document one side removed
    // after the other inserted it): each path that differs between the two
    // sides and is staged unlike the result goes back to the result.
    for change in try repository.changes(from: headTree, to: try repository.commit(theirs).tree())
    where writes[change.path] == nil {
      let target = targetTree.blobID(at: change.path)
      let staged = index.entry(at: change.path)?.id
      guard conflicted.contains(change.path) || staged != target else { continue }
      writes[change.path] = .some(target)
      allowed[change.path] = [change.old, change.new, staged]
    }
    for path in conflicted where writes[path] == nil { writes[path] = .some(targetTree.blobID(at: path)) }
    return (writes, allowed)
  }

  /// The message git prepared for the merge of `theirs` (`MERGE_MSG`,
  /// without its comment lines), else one that names the commit.
  private func message(theirs: GitOID) throws -> String {
    guard let bytes = try FileSystem.read(store.gitDirectory + "/MERGE_MSG") else {
      return "folio: merge \(theirs.description.prefix(12))\n"
    }
    let lines = String(decoding: bytes, as: UTF8.self).split(
      separator: "\n", omittingEmptySubsequences: false
    )
    .filter { !$0.hasPrefix("#") }
    let text = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    return text.isEmpty ? "folio: merge \(theirs.description.prefix(12))\n" : text + "\n"
  }

  /// Removes the files git keeps while a merge waits to be concluded.
  private func dropState() throws {
    for name in ["MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE"] {
      _ = try FileSystem.remove(store.gitDirectory + "/" + name)
    }
  }
}
