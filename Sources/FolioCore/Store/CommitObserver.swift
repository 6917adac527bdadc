/// A later layer that wants to hear of every transaction a store commits:
/// the order indexes, live queries, git's index. The store names none of
/// them; they come in through ``StoreWiring`` (as GRDB's
/// `TransactionObserver` keeps SQLite's layer unaware of what observes it).
package protocol CommitObserver: Sendable {
  /// A transaction's documents are in place and flushed. Called before
  /// git's index and the journal are brought up to date: nothing an
  /// observer does may need either.
  func storeDidCommit(_ store: Store, writes: [Journal.Write])

  /// A transaction (or its redo after a crash) has fully landed, and
  /// `restored` documents came back from eviction: a later layer may now
  /// bring its own records (git's index flags) up to date. Failures are
  /// its own to swallow: the write has happened.
  func storeDidLand(_ store: Store, writes: [Journal.Write], restored: Set<String>)
}

extension CommitObserver {
  package func storeDidCommit(_ store: Store, writes: [Journal.Write]) {}
  package func storeDidLand(_ store: Store, writes: [Journal.Write], restored: Set<String>) {}
}
