import FolioCore
import FolioSystem

extension Store {
  /// Renames table `old` to `new`, as one commit.
  ///
  /// Pending changes are committed first. Then one commit changes
  /// `folio.yaml` (the key, a default `path:`, and `old` added to the
  /// table's `renamed-from:`), `.gitattributes`, and moves the folder when
  /// it sits at the default place for the old name (`data/old` becomes
  /// `data/new`): a move of one git tree, however many documents it holds,
  /// with no op. The working tree, git's index and the branch then move to
  /// it, as a sync's checkout moves them. Another replica takes it as any
  /// other commit; one that still writes under the old name meanwhile is
  /// merged into the new one, by its ops (see ``Config/renames``).
  ///
  /// ```swift
  /// let (store, commit) = try store.renameTable("todos", to: "tasks")
  /// ```
  /// - Returns: the store opened again on the new config, and the commit's id.
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_CONFIG` for a name another table
  ///   has or had; `WOULD_OVERWRITE` when a document file of the table
  ///   does not parse (fix it or remove it first) or the new folder holds
  ///   files; nothing is changed then.
  public func renameTable(_ old: String, to new: String) throws -> (store: Store, commit: String) {
    let commit: GitOID = try lock.withLock {
      try recoverBeforeWrite()
      let table = try self.table(named: old)
      // Conflict records name the table; settled first, none is orphaned.
      let open = try conflicts(table: old).count
      if open > 0 {
        throw FolioError(
          .conflict,
          "table '\(old)' has \(open) open conflict(s); settle them first (see 'folio conflicts \(old)'), then rename",
          table: old)
      }
      let (repository, head) = try commitPending(before: "rename", table: table)
      let headTree = try head.tree()
      let (newText, renamed) = try ConfigEditor(text: try configText()).renaming(table: old, to: new)
      var changes = try configFileChanges(newText, repository: repository)
      if renamed.path != table.path {
        if try headTree.subtree(at: renamed.path, repository: repository) != nil
          || !(try FileSystem.list(rootPath + "/" + renamed.path) ?? []).isEmpty
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
    return (try Store(rootPath: rootPath, wiring: wiring), commit.description)
  }
}
