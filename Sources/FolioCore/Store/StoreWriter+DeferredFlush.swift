import Dispatch
import FolioSystem
import Glibc
import Synchronization

extension StoreWriter {
  /// How many deferred records, or journal bytes, start a checkpoint in the
  /// background; at four times as many (the checkpoints do not keep up),
  /// the write that passes them flushes.
  static let deferredFlushLimit = (records: 64, bytes: 1 << 20)

  /// ``Store/write(_:)`` for a stream of transactions from concurrent clients
  /// (`folio serve`'s group commit): each is durable when this returns, as
  /// always, but through its journal record alone. The op log and the
  /// documents are flushed later, once for many transactions, by
  /// ``checkpointDeferredWrites()``, by any other write or recovery, or when
  /// the records pass ``deferredFlushLimit``. A crash before that is
  /// repaired from the journal like any other: every record is redone in
  /// order.
  package func writeDeferringFlush<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
    let checked = try checkSchemasBeforeLocking(body)
    return try store.lock.withLock {
      try store.recoverBeforeWrite(keepingDeferred: true)
      return try writeLocked(deferringFlush: true, checked: checked, body)
    }
  }

  /// Flushes the files of transactions written with
  /// ``writeDeferringFlush(_:)`` and drops their records from the journal;
  /// nothing to do when there are none.
  ///
  /// The flush (a `syncfs`, tens of milliseconds under load) runs without
  /// the store lock, so writes go on meanwhile: it covers the records in
  /// the journal when it began, and those appended since stay, alone in a
  /// journal written anew and flushed before it replaces the old one (a
  /// crash before or after the rename finds every record it needs).
  package func checkpointDeferredWrites() throws {
    try store.checkpointSerial.withLock { _ in
      guard let flushed = store.deferredFlush.withLock({ $0 }) else { return }
      try store.spares.checkpoint { try FileSystem.syncFileSystem(containing: store.rootPath) }
      try store.lock.withLock { try dropRecords(flushedBy: flushed) }
    }
  }

  /// Runs ``checkpointDeferredWrites()`` on another thread, unless one is
  /// already queued.
  func checkpointInBackground() {
    let queued = store.checkpointQueued.withLock { queued in
      defer { queued = true }
      return queued
    }
    guard !queued else { return }
    DispatchQueue.global(qos: .utility).async { [store] in
      store.checkpointQueued.withLock { $0 = false }
      // A failure leaves the records in the journal, where the next
      // checkpoint, write or open finishes them.
      try? store.writer.checkpointDeferredWrites()
    }
  }

  /// With the lock held: drops from the journal the records of `flushed`,
  /// whose files a flush that began after them has made durable.
  func dropRecords(flushedBy flushed: DeferredFlush) throws {
    // Emptied meanwhile (by another write, which flushed first).
    guard let state = store.deferredFlush.withLock({ $0 }), state.run == flushed.run else { return }
    guard journalEnds(with: state) else {
      // Another process redid the journal (flushing) or wrote its own.
      store.deferredFlush.withLock { $0 = nil }
      return
    }
    if state.records == flushed.records {
      try Journal.clear(at: store.journalPath)
      store.deferredFlush.withLock { $0 = nil }
      return
    }
    try Journal.keepRecords(at: store.journalPath, from: flushed.journalSize)
    store.deferredFlush.withLock { state in
      state?.journalSize -= flushed.journalSize
      state?.records -= flushed.records
    }
  }

  /// Where the next record's op-log segment starts, and the lines already
  /// in the log past the last deferred record (edits folded in after it),
  /// which the record carries so that the segments join up.
  func deferredLogStart() throws -> (offset: Int, carried: [UInt8]) {
    let size = try OpLog.size(of: store.opLogPath)
    guard let logEnd = store.deferredFlush.withLock({ $0?.logEnd }), logEnd < size else { return (size, []) }
    let fd = try FileSystem.syscall("open", path: store.opLogPath) {
      open(store.opLogPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: size - logEnd)
    let count = try bytes.withUnsafeMutableBytes { raw in
      try FileSystem.syscall("pread", path: store.opLogPath) {
        pread(fd, raw.baseAddress, raw.count, off_t(logEnd))
      }
    }
    return (logEnd, Array(bytes.prefix(count)))
  }

  /// Notes a deferred record just applied, and checkpoints past the limit.
  func keepDeferred(_ journal: Journal, trailer: [UInt8], journalSize: Int) throws {
    let records = store.deferredFlush.withLock { state -> Int in
      let records = (state?.records ?? 0) + 1
      state = DeferredFlush(
        journalSize: journalSize, trailer: trailer, logEnd: journal.logOffset + journal.logBytes.count,
        records: records, run: state?.run ?? DeferredFlush.nextRun())
      return records
    }
    let limit = Self.deferredFlushLimit
    if records >= 4 * limit.records || journalSize >= 4 * limit.bytes {
      try flushDeferred()
    } else if records >= limit.records || journalSize >= limit.bytes {
      checkpointInBackground()
    }
  }

  /// With the lock held: if the journal holds exactly this process's
  /// deferred records, flushes them (or, `keeping`, leaves them) and
  /// returns true; otherwise forgets them (whoever changed the journal
  /// redid them, flushing) and returns false.
  func finishDeferred(keeping: Bool) throws -> Bool {
    guard let state = store.deferredFlush.withLock({ $0 }) else { return false }
    guard journalEnds(with: state) else {
      store.deferredFlush.withLock { $0 = nil }
      return false
    }
    if !keeping { try flushDeferred() }
    return true
  }

  private func flushDeferred() throws {
    try store.spares.checkpoint { try FileSystem.syncFileSystem(containing: store.rootPath) }
    try Journal.clear(at: store.journalPath)
    store.deferredFlush.withLock { $0 = nil }
  }

  private func journalEnds(with state: DeferredFlush) -> Bool {
    guard let tail = Journal.tail(at: store.journalPath) else { return false }
    return tail.whole && tail.size == state.journalSize && tail.trailer == state.trailer
  }
}
