import FolioSystem

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
