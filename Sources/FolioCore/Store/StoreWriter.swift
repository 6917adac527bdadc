import FolioSystem
import Glibc

/// Carries transactions to disk: it runs the body, checks what it would
/// write, writes the journal record (the durability point), then the op
/// log and the documents, and tells the later layers. It also redoes what
/// a crash left in the journal.
///
/// What it keeps between transactions (the deferred flush, the spare
/// files, the commit instant) is stored in the ``Store``, whose lock
/// guards it.
package struct StoreWriter {
  /// The store written to.
  let store: Store

  /// How many times a transaction runs again when a document it read
  /// changes before its durability point.
  static let changedDocumentRetries = 32

  /// ``Store/write(_:)`` for callers that already hold the lock. With
  /// `deferringFlush`, see ``writeDeferringFlush(_:)``.
  package func writeLocked<T>(
    deferringFlush: Bool = false, checked: [String: CheckedDocument] = [:],
    _ body: (WriteTransaction) throws -> T
  ) throws -> T {
    var attempt = 0
    while true {
      let transaction = WriteTransaction(store: store, lastHLC: try store.clock.lastHLC())
      transaction.checkedWrites = checked
      let value = try body(transaction)
      do {
        try commit(transaction, deferringFlush: deferringFlush)
        return value
      } catch let changed as DocumentChangedError {
        attempt += 1
        if attempt < Self.changedDocumentRetries { continue }
        throw FolioError(
          .conflict,
          "\(store.relative(changed.path)) kept changing while Folio wrote it (another program is saving it); "
            + "nothing was written: try again",
          path: store.relative(changed.path))
      }
    }
  }

  func commit(_ transaction: WriteTransaction, deferringFlush deferred: Bool) throws {
    let ops = transaction.ops
    let writes = transaction.stagedWrites()
    if ops.isEmpty && writes.isEmpty { return }
    // Everything that can fail is checked before the durability point (a
    // journal that cannot be redone would block every later write).
    let lines = ops.map { $0.json.compactBytes() }
    try checkSizes(writes, ops: zip(ops, lines).map { ($0, $1.count) })
    try checkSchemas(writes, checked: &transaction.checkedWrites)
    let folders = WriteFolders(root: store.rootPath)
    try checkWrites(writes, opLog: !ops.isEmpty, folders: folders)
    var logBytes: [UInt8] = []
    for line in lines {
      logBytes += line
      logBytes.append(UInt8(ascii: "\n"))
    }
    // A transaction that replaces the journal must not drop deferred
    // records whose files are not flushed yet (every path recovers first;
    // this holds even for one that does not).
    if !deferred { _ = try finishDeferred(keeping: false) }
    // After a deferred transaction the record starts where its ops ended,
    // so the records' log segments join up on a redo (edits folded in
    // after it are carried in this one).
    let (logOffset, carried) = try deferredLogStart()
    let journal = Journal(
      logPath: store.opLogPath, logOffset: logOffset, logBytes: carried + logBytes,
      writes: writes, lastHLC: ops.map(\.hlc).max())
    try transaction.commitEvictions(evicted: true)
    let trailer: [UInt8]
    var journalSize = 0
    if deferred {
      (trailer, journalSize) = try journal.append(to: store.journalPath, root: store.rootPath)
    } else {
      trailer = try journal.write(to: store.journalPath, root: store.rootPath)
    }
    var told = false
    do {
      try apply(journal, redo: false, folders: folders, flush: !deferred)
      // Every document is in place and flushed: the commit instant.
      store.lastCommitInstant.withLock { $0 = Store.wallNanos() }
      // Other processes' observers may read now (FolioQuery/Observation/ObservationWatcher.swift).
      Journal.stampApplied(trailer, journal: store.journalPath)
      // Indexes and live queries hear of it before the git index and the
      // journal are brought up to date: nothing they do needs either, and
      // the truncate may wait behind other writers' flushes in the file
      // system's own journal.
      tellCommitted(writes)
      told = true
      tellLanded(journal.writes)
      if deferred {
        try keepDeferred(journal, trailer: trailer, journalSize: journalSize)
      } else {
        try Journal.clear(at: store.journalPath)
      }
    } catch var error as FolioError {
      // Past the durability point the transaction has happened: finish it
      // now if the fault has passed, else say it will be finished.
      if (try? store.recover()) == nil {
        error.message +=
          "; the transaction is committed and will be completed when the store is next opened"
        throw error
      }
    }
    if !told { tellCommitted(writes) }
    let restored = try transaction.commitEvictions(evicted: false)
    if !restored.isEmpty { tellLanded([], restored: restored) }
    let size = store.opLogSegments.clockKey()
    if let last = ops.map(\.hlc).max() {
      store.clockState.withLock { state in
        if state.last.map({ $0 < last }) ?? true { state.last = last }
        state.logSize = size
      }
    }
  }

  /// Tells the later layers (order indexes, live queries) of a
  /// transaction's writes.
  private func tellCommitted(_ writes: [Journal.Write]) {
    for observer in store.wiring.observers { observer.storeDidCommit(store, writes: writes) }
  }

  /// Tells the later layers (git's index) that writes have fully landed.
  func tellLanded(_ writes: [Journal.Write], restored: Set<String> = []) {
    for observer in store.wiring.observers {
      observer.storeDidLand(store, writes: writes, restored: restored)
    }
  }

  /// Carries out a journal: the op log first, then the documents, then
  /// flushes. On redo, a document that no longer holds its old content was
  /// changed by someone since, and is left alone.
  ///
  /// Every file is opened store.relative to a folder descriptor from `folders`,
  /// without following links. Right before each rename the document is
  /// read again: an edit saved since the transaction read it is folded in
  /// (StoreWriter+Placement.swift), never overwritten.
  ///
  /// Without `flush`, nothing is flushed: the caller flushes the file
  /// system later (a deferred transaction's checkpoint, or the one flush
  /// at the end of a redo), and a deferred transaction's documents are
  /// written into spare files (SpareFiles.swift).
  func apply(_ journal: Journal, redo: Bool, folders: WriteFolders, flush: Bool = true) throws {
    if !journal.logBytes.isEmpty {
      try OpLog.append(
        journal.logBytes, to: journal.logPath, at: journal.logOffset, root: store.rootPath, sync: flush)
    }
    // Past a few documents, one syncfs beats an fsync per file and folder.
    // A redo always ends in one: the files it finds already written may
    // be those of a deferred flush, never flushed.
    let batch = redo || journal.writes.count > 16
    var directories: [String: Int32] = [:]
    var folds: [Op] = []
    for write in journal.writes {
      let (directory, name) = FileSystem.split(write.path)
      guard let dirfd = try folders.descriptor(for: directory, create: write.new != nil) else { continue }
      if redo {
        // A crash between a swap (``placeDocument``) and the removal of
        // what it swapped out leaves the old content at the temp name,
        // and the document already new: nothing below would touch it.
        // Writers hold the lock, so no one else is staging there.
        unlinkat(dirfd, FileSystem.temporaryName(for: name), 0)
        let current = try FileSystem.openForReading(in: dirfd, name: name, path: store.relative(write.path))
          .map {
            fd in
            defer { close(fd) }
            return try FileSystem.readAll(fd, path: write.path)
          }
        if let current, let new = write.new, current == new { continue }
        if current == nil && write.new == nil { continue }
        // Changed by someone after the crash: left alone. But a file that
        // holds only zeros and this write's bytes is no one's save: it is
        // this write, cut short by the crash before its blocks reached the
        // disk (``isTornWrite(_:of:)``).
        guard
          current.map({ FNV.hex($0) }) == write.oldHash
            || current.map({ Self.isTornWrite($0, of: write.new) }) == true
        else {
          continue
        }
        // (A later record writes it again if a later transaction did.)
        if let bytes = write.new {
          try FileSystem.writeAtomically(in: dirfd, name: name, bytes, sync: !batch, path: write.path)
        } else if unlinkat(dirfd, name, 0) != 0 && errno != ENOENT {
          throw FileSystem.error(errno, "unlinkat", path: write.path)
        }
      } else {
        folds += try placeDocument(
          write, in: dirfd, name: name, sync: !batch && flush, after: folds.last?.hlc ?? journal.lastHLC,
          spares: !flush ? store.spares : nil)
      }
      directories[directory] = dirfd
      if !redo && write.path == journal.writes.first?.path { TestPause.at(.commit, in: store) }
    }
    if !folds.isEmpty { try logFolds(folds, sync: flush) }
    if !flush { return }
    if batch {
      try FileSystem.syncFileSystem(containing: store.rootPath)
    } else {
      for (directory, fd) in directories.sorted(by: { $0.key < $1.key }) {
        try FileSystem.syscall("fsync", path: directory) { fsync(fd) }
      }
    }
  }

  /// Whether `bytes`, found at a document a journal record writes with
  /// `new`, is what a crash leaves of that write before all of its blocks
  /// reached the disk: nothing, zeros (a new file's size written before its
  /// content, or a spare's flushed zeros), or `new` with some of its
  /// sectors still zero, cut short or padded with zeros (a spare's size or
  /// blocks partly written, in any order). None of these is anyone's save.
  static func isTornWrite(_ bytes: [UInt8], of new: [UInt8]?) -> Bool {
    let sector = 512
    var start = 0
    while start < bytes.count {
      let end = min(start + sector, bytes.count)
      var zero = true
      var ours = true
      for i in start..<end {
        if bytes[i] != 0 { zero = false }
        if bytes[i] != (new.map { i < $0.count ? $0[i] : 0 } ?? 0) { ours = false }
      }
      if !zero && !ours { return false }
      start = end
    }
    return true
  }

  /// Redoes every whole record of the journal a crash left: the
  /// transactions past their durability point whose files may not all be
  /// in place. Call with the lock held.
  func redoJournal() throws {
    guard Journal.isPending(at: store.journalPath) else { return }
    let records =
      try FileSystem.read(store.journalPath).map { Journal.decodeAll($0, root: store.rootPath).records } ?? []
    // A torn last record: its crash came before its durability point, so
    // nothing else of its transaction was touched. It is dropped.
    // Stale temp files of the journal's documents are removed by the
    // redo (``apply(_:redo:folders:flush:)``).
    for journal in records {
      try apply(journal, redo: true, folders: WriteFolders(root: store.rootPath), flush: false)
    }
    if !records.isEmpty {
      // One flush for every record.
      try FileSystem.syncFileSystem(containing: store.rootPath)
      tellLanded(records.flatMap(\.writes))
    }
    try Journal.clear(at: store.journalPath)
    store.clockState.withLock { $0 = Store.ClockState() }
  }
}
