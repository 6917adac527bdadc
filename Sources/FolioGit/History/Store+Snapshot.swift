import FolioCore
import FolioSystem

extension Store {
  /// The store as the commit `revision` left it, read from git's objects
  /// without a checkout (see ``StoreSnapshot``).
  ///
  /// `revision` is anything `git rev-parse` takes (an id, a branch or tag,
  /// `HEAD~3`) or a date (`2026-11-30`, `2 days ago`), meaning the last
  /// commit on the branch's first-parent line before it.
  /// - Throws: `NOT_FOUND` when `revision` names no commit.
  public func snapshot(asOf revision: String) throws -> StoreSnapshot {
    let repository = try openRepository()
    let id = try repository.resolveCommit(revision)
    return try StoreSnapshot(store: self, repository: repository, commit: try repository.commit(id))
  }
}
