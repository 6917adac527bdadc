import FolioCore
import FolioSystem

/// The working tree and git: commits, status and checkouts, done by
/// ``CommitWriter``, ``WorkTreeScan`` and ``Checkout``.
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
    try CommitWriter(store: self).commit(message: message, repository: nil)
  }

  /// ``commit(message:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await store.commit(message: "nightly")
  /// ```
  @discardableResult
  public func commit(message: String? = nil) async throws -> CommitSummary {
    try await perform { try self.commit(message: message) }
  }

  /// ``status()``, run on the store's executor.
  public func status() async throws -> StoreStatus {
    try await perform { try self.status() }
  }

  /// What `folio commit` would do, without doing it.
  public func status() throws -> StoreStatus {
    try lock.withLock { try WorkTreeScan(store: self).status() }
  }

  package func openRepository() throws -> GitRepository {
    guard let repository = try GitRepository.open(workTree: rootPath) else {
      throw FolioError(.git, "\(rootPath) is not a git working tree", path: rootPath, remedy: .createStore)
    }
    return repository
  }

  /// Why a checkout a sync started is still unfinished, or nil when none
  /// is pending (`folio status`, `folio fsck`).
  public func pendingCheckoutProblem() -> String? {
    let checkout = Checkout(store: self)
    guard FileSystem.exists(checkout.journalPath) else { return nil }
    do {
      try lock.withLock { try checkout.recoverCheckout() }
      return nil
    } catch {
      return "\(error)"
    }
  }
}
