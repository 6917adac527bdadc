import FolioSystem
import Synchronization

extension Store {
  /// Why the transaction an interrupted writer left behind could not be
  /// completed when the store was opened, or nil if there was none or it
  /// was completed.
  ///
  /// A store with a pending transaction still reads: `get`, queries,
  /// `status` and `fsck` work and can show this. Each write tries to
  /// complete the transaction first, and fails with this cause until it
  /// has been fixed.
  ///
  /// ```swift
  /// if let pending = store.pendingRecoveryError { print("warning: \(pending.message)") }
  /// ```
  public var pendingRecoveryError: FolioError? { recoveryFailure.withLock { $0 } }

  /// Completes an interrupted transaction at open. A failure is kept, not
  /// thrown: a journal whose redo fails must not stop the commands that
  /// only read (no input may make every command fail).
  func recoverAtOpen() throws {
    do {
      try lock.withLock { try recover() }
    } catch let error as FolioError where error.code != .locked {
      recoveryFailure.withLock { $0 = Store.pendingError(error) }
    }
  }

  /// Completes an interrupted transaction before a write (with the lock
  /// held), or throws its cause and how to fix it.
  package func recoverBeforeWrite(keepingDeferred: Bool = false) throws {
    do {
      try recover(keepingDeferred: keepingDeferred)
      recoveryFailure.withLock { $0 = nil }
    } catch let error as FolioError {
      let pending = Store.pendingError(error)
      recoveryFailure.withLock { $0 = pending }
      throw pending
    }
  }

  /// Completes an interrupted transaction if it can (with the lock held),
  /// for a command that only reads: a failure is kept for
  /// ``pendingRecoveryError``, not thrown.
  package func recoverForReading() {
    _ = try? recoverBeforeWrite()
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
