import FolioCore

/// Subscriptions: tables a partial replica takes in or lets go of
/// (``PartialClone``), and live subscriptions to documents and queries,
/// which keep them on this replica and pull on their own
/// (``SubscriptionPuller``).
extension Store {
  /// Widens this partial replica by table `name`: its documents are
  /// fetched from the remote it was cloned from and checked out, and it
  /// counts as held from then on (queries, status, sync). A table already
  /// held is left as it is.
  ///
  /// Files are written and indexed before the table counts as held, so an
  /// interruption never leaves a held table whose missing files a commit
  /// would take for deletions; running it again finishes the job.
  /// - Throws: `UNKNOWN_TABLE`; `REMOTE` when the fetch fails.
  public func subscribe(table name: String) throws {
    try PartialClone(store: self).subscribe(table: name)
  }

  /// Narrows this partial replica (or makes a full one partial) by table
  /// `name`: its files leave the working tree, and it stays in git as it
  /// is on the remote, marked skip-worktree, so nothing this replica does
  /// records a change to it. A table not held is left as it is.
  /// - Throws: `WOULD_OVERWRITE` when the table has changes not committed
  ///   (commit them first; a sync pushes them).
  public func unsubscribe(table name: String) throws {
    try PartialClone(store: self).unsubscribe(table: name)
  }

  /// What the live subscriptions keep on this replica, oldest first: `sync`
  /// brings back any evicted document they cover. A subscription leaves
  /// this list when it is cancelled or released.
  ///
  /// ```swift
  /// let sub = try todos.findByID("3f2a").subscribe()
  /// store.activeSubscriptions.count   // 1
  /// ```
  public var activeSubscriptions: [SubscriptionTarget] { subscriptions.targets }

  /// Sets the function told the outcome of every automatic pull (see
  /// ``SyncConfig``): the sync summary, or the error that stopped it. A
  /// failed pull is tried again on the next tick, so an unreachable remote
  /// or a held lock only delays the data. Pass nil to stop being told.
  ///
  /// ```swift
  /// store.onPull { result in
  ///     if case .failure(let error) = result { print("pull failed: \(error)") }
  /// }
  /// let sub = try store.collection("todos").findByID("3f2a").subscribe()
  /// ```
  /// The function runs on a private queue, never concurrently with itself.
  public func onPull(_ handler: (@Sendable (Result<SyncSummary, any Error>) -> Void)?) {
    puller.setHandler(handler)
  }

  /// Starts or stops the automatic pull as subscriptions come and go.
  func subscriptionsChanged(active: Bool) {
    guard active, let interval = config.sync.effectivePullInterval else {
      puller.stop()
      return
    }
    puller.start(self, every: interval)
  }

  /// One automatic pull: `sync` without the push. Nil when there is nothing
  /// to pull from: the default remote is not set up in this repository
  /// (a store that only lives here), or every subscription ended.
  func pullForSubscriptions() throws -> SyncSummary? {
    guard !subscriptions.targets.isEmpty else { return nil }
    let remote = config.sync.remote
    if !config.sync.isExplicit, try openRepository().remoteURL(remote) == nil { return nil }
    return try sync(remote: remote, push: false)
  }

  /// Live subscriptions (Ditto's `subscribe`), consulted by `sync`.
  /// The first use wires them to the puller.
  var subscriptions: SubscriptionRegistry {
    attachments.value(SubscriptionRegistry.self) {
      let registry = SubscriptionRegistry()
      registry.onActivityChange { [weak self] active in self?.subscriptionsChanged(active: active) }
      return registry
    }
  }

  /// Pulls from the remote while any subscription is alive.
  var puller: SubscriptionPuller { attachments.value(SubscriptionPuller.self) { SubscriptionPuller() } }
}
