import Glibc

/// Transactions committed with their flush deferred: each one's journal
/// record is durable (its durability point), its op-log lines and
/// documents are written but not yet flushed, and the journal keeps every
/// record until a checkpoint flushes the file system once and empties it.
///
/// Changed only with the store lock held.
struct DeferredFlush {
  /// The journal file's size and last line after the last record this
  /// process appended: anything else means another writer has redone and
  /// emptied it (flushing these files) or written its own.
  var journalSize: Int
  var trailer: [UInt8]
  /// Where the last record's op-log lines end: the next record starts
  /// there.
  var logEnd: Int
  var records: Int
}

extension Store {
  /// How many deferred records, or journal bytes, a checkpoint waits for at
  /// most.
  static let deferredFlushLimit = (records: 64, bytes: 1 << 20)

  /// ``write(_:)`` for a stream of transactions from concurrent clients
  /// (`folio serve`'s group commit): each is durable when this returns, as
  /// always, but through its journal record alone. The op log and the
  /// documents are flushed later, once for many transactions, by
  /// ``checkpointDeferredWrites()``, by any other write or recovery, or when
  /// the records pass ``deferredFlushLimit``. A crash before that is
  /// repaired from the journal like any other: every record is redone in
  /// order.
  func writeDeferringFlush<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
    try lock.withLock {
      try recoverBeforeWrite(keepingDeferred: true)
      return try writeLocked(deferringFlush: true, body)
    }
  }

  /// Flushes the files of transactions written with
  /// ``writeDeferringFlush(_:)`` and empties the journal; nothing to do
  /// when there are none.
  func checkpointDeferredWrites() throws {
    guard deferredFlush.withLock({ $0 != nil }) else { return }
    try lock.withLock { try recover() }
  }

  /// Where the next record's op-log segment starts, and the lines already
  /// in the log past the last deferred record (edits folded in after it),
  /// which the record carries so that the segments join up.
  func deferredLogStart() throws -> (offset: Int, carried: [UInt8]) {
    let size = try OpLog.size(of: opLogPath)
    guard let logEnd = deferredFlush.withLock({ $0?.logEnd }), logEnd < size else { return (size, []) }
    let fd = try FileSystem.syscall("open", path: opLogPath) {
      open(opLogPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: size - logEnd)
    let count = try bytes.withUnsafeMutableBytes { raw in
      try FileSystem.syscall("pread", path: opLogPath) {
        pread(fd, raw.baseAddress, raw.count, off_t(logEnd))
      }
    }
    return (logEnd, Array(bytes.prefix(count)))
  }

  /// Notes a deferred record just applied, and checkpoints past the limit.
  func keepDeferred(_ journal: Journal, trailer: [UInt8], journalSize: Int) throws {
    let records = deferredFlush.withLock { state -> Int in
      let records = (state?.records ?? 0) + 1
      state = DeferredFlush(
        journalSize: journalSize, trailer: trailer, logEnd: journal.logOffset + journal.logBytes.count,
        records: records)
      return records
    }
    if records >= Store.deferredFlushLimit.records || journalSize >= Store.deferredFlushLimit.bytes {
      try flushDeferred()
    }
  }

  /// With the lock held: if the journal holds exactly this process's
  /// deferred records, flushes them (or, `keeping`, leaves them) and
  /// returns true; otherwise forgets them (whoever changed the journal
  /// redid them, flushing) and returns false.
  func finishDeferred(keeping: Bool) throws -> Bool {
    guard let state = deferredFlush.withLock({ $0 }) else { return false }
    guard journalEnds(with: state) else {
      deferredFlush.withLock { $0 = nil }
      return false
    }
    if !keeping { try flushDeferred() }
    return true
  }

  private func flushDeferred() throws {
    try spares.checkpoint { try FileSystem.syncFileSystem(containing: rootPath) }
    try Journal.clear(at: journalPath)
    deferredFlush.withLock { $0 = nil }
  }

  private func journalEnds(with state: DeferredFlush) -> Bool {
    guard let tail = Journal.tail(at: journalPath) else { return false }
    return tail.whole && tail.size == state.journalSize && tail.trailer == state.trailer
  }
}
