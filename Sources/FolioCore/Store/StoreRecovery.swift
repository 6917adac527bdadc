import FolioSystem
import Synchronization

/// Completes what an interrupted writer left: the later layers' own
/// records (a checkout's, an import's), deferred flushes, and the journal.
/// A failure at open is kept in the store (``Store/pendingRecoveryError``)
/// rather than thrown, so that reads go on.
package struct StoreRecovery {
  /// The store recovered.
  let store: Store

  /// Finishes a transaction that a crash interrupted. Call with the lock held.
  ///
  /// Transactions this process committed with their flush deferred are
  /// flushed and their records dropped, or, with `keepingDeferred`, left
  /// for the next deferred transaction to add to.
  package func recover(keepingDeferred: Bool = false) throws {
    for step in store.wiring.recoverySteps where step.isPending(in: store) { try step.recover(store) }
    if try store.writer.finishDeferred(keeping: keepingDeferred) { return }
    try store.writer.redoJournal()
  }

  /// Completes an interrupted transaction at open. A failure is kept, not
  /// thrown: a journal whose redo fails must not stop the commands that
  /// only read (no input may make every command fail).
  func atOpen() throws {
    do {
      try store.lock.withLock { try recover() }
    } catch let error as FolioError where error.code != .locked {
      store.recoveryFailure.withLock { $0 = Self.pendingError(error) }
    }
  }

  /// Completes an interrupted transaction before a write (with the lock
  /// held), or throws its cause and how to fix it.
  package func beforeWrite(keepingDeferred: Bool = false) throws {
    do {
      try recover(keepingDeferred: keepingDeferred)
      store.recoveryFailure.withLock { $0 = nil }
    } catch let error as FolioError {
      let pending = Self.pendingError(error)
      store.recoveryFailure.withLock { $0 = pending }
      throw pending
    }
  }

  /// Completes an interrupted transaction if it can (with the lock held),
  /// for a command that only reads: a failure is kept for
  /// ``Store/pendingRecoveryError``, not thrown.
  package func forReading() {
    _ = try? beforeWrite()
  }

  /// `error`, said as the reason an earlier transaction is still pending.
  private static func pendingError(_ error: FolioError) -> FolioError {
    var pending = error
    if !pending.message.hasPrefix("an interrupted write") {
      pending.message =
        "an interrupted write could not be completed: \(error.message); once that is fixed, the next "
        + "write completes it; reads still work, writes wait for it"
      pending.remedy = .completePendingWrite
    }
    return pending
  }
}
