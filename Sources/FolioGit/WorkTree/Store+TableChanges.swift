import FolioCore
import FolioSystem

/// Changes to a table, or the op logs, as a whole (``TableChanges``).
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
    try TableChanges(store: self).renameTable(old, to: new)
  }

  /// Moves the documents of table `name` to `layout`, as one commit (see
  /// ``TableLayout``).
  ///
  /// Pending changes are committed first. Then one commit sets the table's
  /// `layout:` in `folio.yaml`, updates `.gitattributes`, and moves every
  /// document file to its place in the new layout, with no op: a document
  /// keeps its table and pk, which is what merges go by. The working tree,
  /// git's index and the branch then move to it, as a sync's checkout
  /// moves them. Another replica takes it as any other commit, and what it
  /// writes in the old layout meanwhile is merged into the new one.
  ///
  /// ```swift
  /// let (store, commit) = try store.setLayout(.nested, of: "todos")
  /// ```
  /// - Returns: the store opened again on the new config, and the commit's
  ///   id; nil when the table has that layout already.
  /// - Throws: `UNKNOWN_TABLE`; `WOULD_OVERWRITE` when a document file of
  ///   the table cannot be committed (fix it or remove it first), or when
  ///   a file in the way was changed since the last commit; nothing is
  ///   changed then.
  public func setLayout(_ layout: TableLayout, of name: String) throws -> (store: Store, commit: String?) {
    try TableChanges(store: self).setLayout(layout, of: name)
  }

  /// Drops op log lines that every known ref has already merged, and
  /// commits the smaller logs.
  ///
  /// "Known refs" are the current branch, every other local branch
  /// (`refs/heads/*`: a branch not merged yet still needs its ops) and every
  /// remote-tracking branch (fetch first to include the latest). Ops in their common ancestor are
  /// no longer needed by merges between them: a later merge against an
  /// older base (a replica that was offline) still resolves correctly,
  /// because a change no op explains gets a synthetic op from its diff.
  @discardableResult
  public func compact(message: String? = nil) throws -> CompactionSummary {
    try TableChanges(store: self).compact(message: message)
  }
}
