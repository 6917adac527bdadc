import Dispatch
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
    try FileSystem.syncFileSystem(containing: rootPath)
    try Journal.clear(at: journalPath)
    deferredFlush.withLock { $0 = nil }
    emptyTrash()
  }

  // MARK: Trash

  /// Where deferred transactions move the files their renames swap out
  /// (`.git/folio/trash/`), so that unlinking them waits for no one.
  var trashPath: String { privateDirectory + "/trash" }

  /// The trash folder, made if missing; nil if it cannot be (the old files
  /// are then unlinked in place).
  func openTrash() -> Int32? {
    let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    var fd = open(trashPath, flags)
    if fd < 0 && errno == ENOENT {
      _ = mkdir(trashPath, 0o755)
      fd = open(trashPath, flags)
    }
    return fd >= 0 ? fd : nil
  }

  /// Moves `temp` from the folder `dirfd` to the trash under a name of its
  /// own; false if it could not (another file system, say).
  static func moveToTrash(_ temp: String, in dirfd: Int32, trash: Int32) -> Bool {
    let name = String(UInt64.random(in: 0...UInt64.max), radix: 16) + temp
    return renameat(dirfd, temp, trash, name) == 0
  }

  /// Unlinks what is in the trash, on a background queue. Files moved there
  /// meanwhile wait for the next time.
  func emptyTrash() {
    let path = trashPath
    DispatchQueue.global(qos: .utility).async {
      let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      guard fd >= 0 else { return }
      defer { close(fd) }
      for name in FileSystem.list(inDirectory: fd) { unlinkat(fd, name, 0) }
    }
  }

  private func journalEnds(with state: DeferredFlush) -> Bool {
    guard let tail = Journal.tail(at: journalPath) else { return false }
    return tail.whole && tail.size == state.journalSize && tail.trailer == state.trailer
  }
}
