import FolioJSON
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// A Folio store: a git working tree with `folio.yaml` at its root, where
/// each table is a folder and each document one JSON file.
///
/// Open one with ``init(at:)`` or make one with ``create(at:config:mergeDriver:)``. Both
/// look for the nearest `folio.yaml` upward from the given directory, as git
/// looks for `.git`.
///
/// ```swift
/// let store = try Store(at: URL(fileURLWithPath: "."))
/// let todos = store.collection("todos")
/// try todos.findByID("3f2a").update { d in
///     d?["done"] = true
///     d?["views"].increment(by: 1)
/// }
/// ```
///
/// A store may be used from many threads and many processes at once: writes
/// serialize on a store-wide lock, and every mutation is durable when the
/// call returns.
///
/// Most members come in two forms: one that blocks the calling thread, and
/// an `async` one that runs it on the store's own serial queue, never on
/// Swift's cooperative thread pool.
///
/// ## Topics
///
/// ### Opening and creating a store
///
/// - ``init(at:)``
/// - ``init(atPath:)``
/// - ``create(at:config:mergeDriver:)``
/// - ``create(at:tables:mergeDriver:)``
/// - ``clone(url:into:mergeDriver:tables:)``
/// - ``root``
/// - ``config``
/// - ``replicaID``
///
/// ### Reading and writing documents
///
/// - ``collection(_:)``
/// - ``write(_:)-3g7od``
/// - ``write(_:)-293zf``
/// - ``apply(table:pk:op:columns:transforms:)-k3gf``
/// - ``apply(table:pk:op:columns:transforms:)-1td7v``
/// - ``apply(table:pk:op:columns:transforms:)-6gk68``
/// - ``apply(table:pk:op:columns:transforms:)-2ohf5``
/// - ``apply(table:pk:op:columns:transforms:)-2vkew``
/// - ``apply(table:where:op:columns:transforms:dryRun:)-76r5j``
/// - ``apply(table:where:op:columns:transforms:dryRun:)-5amnf``
/// - ``apply(table:where:op:columns:transforms:dryRun:)-1pxoz``
/// - ``apply(table:where:op:columns:transforms:dryRun:)-2viq5``
/// - ``apply(table:where:op:columns:transforms:dryRun:)-5d75q``
/// - ``ops(table:pk:)``
/// - ``isEvicted(table:pk:)``
///
/// ### Tables and schemas
///
/// - ``table(named:)``
/// - ``addTable(_:)``
/// - ``removeTable(named:)``
/// - ``withTableAdded(_:_:)``
/// - ``renameTable(_:to:)``
/// - ``setLayout(_:of:)``
/// - ``addIndex(_:to:)``
/// - ``removeIndex(_:from:)``
/// - ``buildIndexes(table:)``
/// - ``removeIndexFiles(ofFormerTable:)``
/// - ``schemaText(table:)``
/// - ``inferSchema(table:)``
///
/// ### Committing and syncing
///
/// - ``commit(message:)-93boo``
/// - ``commit(message:)-6p4a5``
/// - ``status()-5rbyl``
/// - ``status()-23tdo``
/// - ``sync(remote:push:)-7iell``
/// - ``sync(remote:push:)-54nkq``
/// - ``onPull(_:)``
/// - ``activeSubscriptions``
/// - ``compact(message:)``
///
/// ### Partial replicas
///
/// - ``heldTables``
/// - ``absentTables``
/// - ``heldTableNames``
/// - ``subscribe(table:)``
/// - ``unsubscribe(table:)``
///
/// ### Conflicts
///
/// - ``conflicts(table:)``
/// - ``conflictChanges(table:)``
/// - ``observeConflicts(table:_:)``
/// - ``observeConflicts(table:deliverOn:_:)``
/// - ``resolveConflict(table:pk:path:_:)``
/// - ``ConflictResolution``
///
/// ### History
///
/// - ``diff(from:to:tables:)``
/// - ``snapshot(asOf:)``
/// - ``exportRows(_:asOf:options:onProgress:)``
/// - ``history(table:pk:)``
/// - ``blame(table:pk:)``
///
/// ### Working with git directly
///
/// - ``registerMergeDriver(program:)``
/// - ``registerDiffDriver(program:)``
/// - ``textconv(_:)``
/// - ``runMergeDriver(basePath:oursPath:theirsPath:path:)``
/// - ``reconcileGitMerge()``
/// - ``stoppedGitMerge``
/// - ``pendingCheckoutProblem()``
/// - ``undoPullBringingBadConfig(at:)``
///
/// ### Importing and exporting
///
/// - ``importRows(into:options:onBadRow:onProgress:)-8emd0``
/// - ``importRows(into:options:onBadRow:onProgress:)-42x77``
/// - ``exportRows(_:options:onProgress:)-52wgj``
/// - ``exportRows(_:options:onProgress:)-8gr0g``
/// - ``exportRows(from:options:onProgress:)-4uoox``
/// - ``exportRows(from:options:onProgress:)-2m235``
///
/// ### Checking and repairing
///
/// - ``check()``
/// - ``format(table:)``
/// - ``pendingRecoveryError``
///
/// ### The index daemon
///
/// - ``indexDaemonMode``
/// - ``indexDaemonStatus()``
/// - ``publishIndexes()``
/// - ``runIndexDaemon(idle:)``
/// - ``startIndexDaemonOnDemand(executable:)``
/// - ``stopIndexDaemon(timeout:)``
///
/// ### Editor support
///
/// - ``writeVSCodeSettings()``
/// - ``vscodeSettingsPath``
public final class Store: Sendable {
  /// The store's root directory (where `folio.yaml` is).
  public let root: URL
  /// The parsed `folio.yaml`.
  public let config: Config
  /// This checkout's replica id (kept in `.git/folio/replica`, never committed).
  public let replicaID: String

  package let rootPath: String
  /// The layers above the store, as the composition root wired them when
  /// it opened this store; a store reopened from this one gets the same.
  package let wiring: StoreWiring
  package let gitDirectory: String
  package let privateDirectory: String
  package let lock: StoreLock
  /// Imports take turns in the one staging folder (``ImportWorkspace``)
  /// while other writers go on; the store lock is taken only to land.
  package let importLock: StoreLock
  /// Later layers' per-store state (live queries, subscriptions).
  package let attachments = StoreAttachments()
  let clock = Mutex<ClockState>(ClockState())
  /// The newest segment of this replica's op log, once found; -1 before.
  let opLogSegment = Mutex<Int>(-1)
  /// The tables a partial replica holds, once read (Store+PartialReplica.swift):
  /// nil before, `.some(nil)` for a full replica.
  let heldTableNamesCache = Mutex<Set<String>??>(nil)
  /// Why the transaction an earlier process left in the journal could not
  /// be completed, if it could not (Store+Recovery.swift).
  let recoveryFailure = Mutex<FolioError?>(nil)
  /// When the last transaction committed here became visible
  /// (Store+Benchmark.swift).
  let lastCommitInstant = Mutex<Int>(0)
  /// Transactions committed here whose files are not flushed yet
  /// (Store+DeferredFlush.swift). Changed only with the store lock held.
  let deferredFlush = Mutex<DeferredFlush?>(nil)
  /// The files deferred transactions write again (SpareFiles.swift).
  let spares: SpareFiles
  /// One checkpoint of deferred transactions at a time, since their
  /// flushes run without the store lock; and whether one is queued.
  let checkpointSerial = Mutex(())
  let checkpointQueued = Mutex(false)
  /// Where the `async` forms of the blocking calls run (Store+Async.swift):
  /// one serial queue per store, off Swift's cooperative thread pool.
  let executor = DispatchQueue(label: "folio.store.executor")

  /// The latest HLC this process has seen in the op log, and the log size it
  /// saw it at, so a new stamp needs no read when no one else wrote.
  struct ClockState {
    var last: HLC?
    var logSize = -1
  }

  /// The folder inside `.git` for Folio's private, rebuildable state.
  package static let privateFolderName = "folio"
  /// The folder, relative to the root, that holds the op logs.
  package static let opsFolder = ".folio/ops"

  /// Opens the store that holds `url` with the layers in `wiring`; the
  /// public `init(at:)` (module `Folio`) passes them all.
  package convenience init(at url: URL, wiring: StoreWiring) throws {
    // A relative URL resolves against the folder it was made relative to.
    try self.init(path: url.absoluteURL.path, wiring: wiring)
  }

  /// Opens the store that holds `path` (relative to the working directory
  /// unless absolute) with the layers in `wiring`.
  package convenience init(path: String, wiring: StoreWiring) throws {
    let start = FileSystem.lexicalPath(path)
    guard let root = Store.findRoot(from: start) else {
      throw FolioError(
        .storeNotFound,
        "no \(Config.fileName) in \(start) or any parent directory", path: start, remedy: .createStore)
    }
    try self.init(rootPath: root, wiring: wiring)
  }

  /// Opens the store whose root is `rootPath`.
  package init(rootPath: String, wiring: StoreWiring, lockTimeout: Double = StoreLock.defaultTimeout) throws {
    let config = try Config(path: rootPath + "/" + Config.fileName)
    guard let gitDirectory = try wiring.gitDirectory(rootPath) else {
      throw FolioError(
        .git, "\(rootPath) has a \(Config.fileName) but is not a git working tree",
        path: rootPath, remedy: .createStore)
    }
    let privateDirectory = gitDirectory + "/" + Store.privateFolderName
    try FileSystem.makeDirectories(privateDirectory)
    self.rootPath = rootPath
    self.wiring = wiring
    self.root = URL(fileURLWithPath: rootPath, isDirectory: true)
    self.config = config
    self.gitDirectory = gitDirectory
    self.privateDirectory = privateDirectory
    self.spares = SpareFiles(parent: privateDirectory + "/spares")
    self.replicaID = try Store.loadReplicaID(in: privateDirectory)
    self.lock = StoreLock(path: privateDirectory + "/lock", timeout: lockTimeout)
    self.importLock = StoreLock(
      path: privateDirectory + "/import-lock", timeout: lockTimeout, subject: "the import staging folder")
    try verifyFolders()
    if Journal.isPending(at: journalPath)
      || wiring.recoverySteps.contains(where: { $0.isPending(in: self) })
    {
      try recoverAtOpen()
    }
  }

  /// The nearest directory at or above `path` that holds a `folio.yaml`.
  package static func findRoot(from path: String) -> String? {
    var current = FileSystem.realPath(path) ?? path
    while true {
      if FileSystem.isRegularFile(current + "/" + Config.fileName) { return current }
      if current == "/" || current.isEmpty { return nil }
      current = FileSystem.split(current).directory
    }
  }

  /// The id in a `replica` file's bytes, without the spaces and newline
  /// around it. (Foundation's trimming would cost every process a tenth of
  /// a millisecond at start: it goes through NSString.)
  private static func replicaID(from bytes: [UInt8]) -> String {
    let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
    guard let first = bytes.firstIndex(where: { !isSpace($0) }),
      let last = bytes.lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(decoding: bytes[first...last], as: UTF8.self)
  }

  /// Reads the replica id, making one the first time. `O_EXCL` makes two
  /// processes that race here agree on one id.
  private static func loadReplicaID(in directory: String) throws -> String {
    let path = directory + "/replica"
    if let bytes = try FileSystem.read(path) {
      let id = replicaID(from: bytes)
      if !id.isEmpty { return id }
    }
    // Write the id whole under a private name, then link it into place:
    // link fails if another process got there first, and a crash never
    // leaves an empty id file behind.
    let id = FileSystem.randomBytes(8).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }
      .joined()
    let temp = path + ".\(getpid()).tmp"
    try FileSystem.writeAtomically(temp, Array((id + "\n").utf8), sync: true)
    defer { unlink(temp) }
    if link(temp, path) == 0 {
      try FileSystem.syncDirectory(directory)
      return id
    }
    let code = errno
    guard code == EEXIST else { throw FileSystem.error(code, "link", path: path) }
    if let bytes = try FileSystem.read(path) {
      let existing = replicaID(from: bytes)
      if !existing.isEmpty { return existing }
    }
    // An empty file from an older version of this code: replace it.
    try FileSystem.syscall("rename", path: path) { rename(temp, path) }
    try FileSystem.syncDirectory(directory)
    return id
  }

  // MARK: Paths

  package var journalPath: String { privateDirectory + "/journal" }
  var evictedPath: String { privateDirectory + "/evicted.json" }
  /// This replica's op log: the newest segment of it, where ops are
  /// appended (see ``opLogSegmentBytes``).
  package var opLogPath: String { rootPath + "/" + Store.opsFolder + "/" + opLogName }

  /// The table named `name`.
  /// - Throws: `UNKNOWN_TABLE`, listing the tables there are (see
  ///   ``Config/unknownTableError(_:)``); `TABLE_ABSENT` for a table a
  ///   partial replica does not hold (see ``absentTables``).
  public func table(named name: String) throws -> TableConfig {
    guard let table = config.table(named: name) else { throw config.unknownTableError(name) }
    if let held = heldTableNames, !held.contains(table.name) { throw absentTableError(table.name) }
    return table
  }

  /// The absolute folder of `table`.
  package func directory(of table: TableConfig) -> String { rootPath + "/" + table.path }

  /// The absolute file of document `pk` in `table`.
  package func documentPath(table: TableConfig, pk: String) throws -> String {
    do {
      return directory(of: table) + "/" + (try table.documentName(for: pk))
    } catch var error as FolioError {
      error.table = table.name
      throw error
    }
  }

  /// `path` relative to `root`, for messages and the journal.
  package static func relative(_ path: String, to root: String) -> String {
    path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
  }

  /// `path` relative to the store root.
  package func relative(_ path: String) -> String { Store.relative(path, to: rootPath) }

  // MARK: Writing

  /// Runs `body` as one transaction: every mutation it makes lands together,
  /// with one durability point, or none does if it throws.
  ///
  /// ```swift
  /// try store.write { tx in
  ///     try tx.apply(table: "todos", pk: "a", op: .upsert, columns: ["done": true])
  ///     try tx.apply(table: "todos", pk: "b", op: .remove)
  /// }
  /// ```
  /// Do not call `write` again from inside `body`.
  ///
  /// If another program (an editor) saves a document that `body` read
  /// before the transaction's durability point, `body` runs again on the
  /// saved file, so the save is never overwritten: keep `body` free of
  /// other side effects. A save that lands later, between the durability
  /// point and the rename, is folded in as an op of its own.
  /// - Throws: `CONFLICT` if documents kept changing through every retry.
  public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
    let checked = try checkSchemasBeforeLocking(body)
    return try lock.withLock {
      try recoverBeforeWrite()
      return try writeLocked(checked: checked, body)
    }
  }

  /// How many times a transaction runs again when a document it read
  /// changes before its durability point.
  static let changedDocumentRetries = 32

  /// ``write(_:)`` for callers that already hold the lock. With
  /// `deferringFlush`, see ``writeDeferringFlush(_:)``.
  package func writeLocked<T>(
    deferringFlush: Bool = false, checked: [String: CheckedDocument] = [:],
    _ body: (WriteTransaction) throws -> T
  ) throws -> T {
    var attempt = 0
    while true {
      let transaction = WriteTransaction(store: self, lastHLC: try lastHLC())
      transaction.checkedWrites = checked
      let value = try body(transaction)
      do {
        try commit(transaction, deferringFlush: deferringFlush)
        return value
      } catch let changed as DocumentChangedError {
        attempt += 1
        if attempt < Store.changedDocumentRetries { continue }
        throw FolioError(
          .conflict,
          "\(relative(changed.path)) kept changing while Folio wrote it (another program is saving it); "
            + "nothing was written: try again",
          path: relative(changed.path))
      }
    }
  }

  /// The newest HLC in this replica's log. Cached while the log's size is
  /// unchanged; otherwise read from its tail.
  package func lastHLC() throws -> HLC? {
    let size = opLogClockKey()
    if let cached = clock.withLock({ $0.logSize == size ? $0.last : nil }) { return cached }
    var last = try OpLog.lastOp(in: opLogPath)?.hlc
    // A segment just started is empty: the last op is in an older one.
    for older in opLogSegmentPaths.dropFirst() where last == nil {
      last = try OpLog.lastOp(in: older)?.hlc
    }
    if let seen = withinHorizon(try seenClock()), last.map({ $0 < seen }) ?? true { last = seen }
    if let stamp = last, stamp.wall == 0 || withinHorizon(stamp) == nil {
      // A default write (stamped at time 0) is last, or a stamp past the
      // clock bound: the clock is the newest real stamp within the bound,
      // which takes a full read to find.
      let horizon = clockHorizon
      last = try OpLog.entries(in: opLogPath, displayName: relative(opLogPath)).map(\.op.hlc)
        .filter { $0.wall > 0 && $0.wall <= horizon }.max()
      if let seen = withinHorizon(try seenClock()), last.map({ $0 < seen }) ?? true { last = seen }
    }
    clock.withLock { $0 = ClockState(last: last, logSize: size) }
    return last
  }

  private func commit(_ transaction: WriteTransaction, deferringFlush deferred: Bool) throws {
    let ops = transaction.ops
    let writes = transaction.stagedWrites()
    if ops.isEmpty && writes.isEmpty { return }
    // Everything that can fail is checked before the durability point (a
    // journal that cannot be redone would block every later write).
    let lines = ops.map { $0.json.compactBytes() }
    try checkSizes(writes, ops: zip(ops, lines).map { ($0, $1.count) })
    try checkSchemas(writes, checked: &transaction.checkedWrites)
    let folders = WriteFolders(root: rootPath)
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
      logPath: opLogPath, logOffset: logOffset, logBytes: carried + logBytes,
      writes: writes, lastHLC: ops.map(\.hlc).max())
    try transaction.commitEvictions(evicted: true)
    let trailer: [UInt8]
    var journalSize = 0
    if deferred {
      (trailer, journalSize) = try journal.append(to: journalPath, root: rootPath)
    } else {
      trailer = try journal.write(to: journalPath, root: rootPath)
    }
    var told = false
    do {
      try apply(journal, redo: false, folders: folders, flush: !deferred)
      // Every document is in place and flushed: the commit instant.
      lastCommitInstant.withLock { $0 = Store.wallNanos() }
      // Other processes' observers may read now (FolioQuery/Observation/ObservationWatcher.swift).
      Journal.stampApplied(trailer, journal: journalPath)
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
        try Journal.clear(at: journalPath)
      }
    } catch var error as FolioError {
      // Past the durability point the transaction has happened: finish it
      // now if the fault has passed, else say it will be finished.
      if (try? recover()) == nil {
        error.message +=
          "; the transaction is committed and will be completed when the store is next opened"
        throw error
      }
    }
    if !told { tellCommitted(writes) }
    let restored = try transaction.commitEvictions(evicted: false)
    if !restored.isEmpty { tellLanded([], restored: restored) }
    let size = opLogClockKey()
    if let last = ops.map(\.hlc).max() {
      clock.withLock { state in
        if state.last.map({ $0 < last }) ?? true { state.last = last }
        state.logSize = size
      }
    }
  }

  /// Tells the later layers (order indexes, live queries) of a
  /// transaction's writes.
  private func tellCommitted(_ writes: [Journal.Write]) {
    for observer in wiring.observers { observer.storeDidCommit(self, writes: writes) }
  }

  /// Tells the later layers (git's index) that writes have fully landed.
  private func tellLanded(_ writes: [Journal.Write], restored: Set<String> = []) {
    for observer in wiring.observers { observer.storeDidLand(self, writes: writes, restored: restored) }
  }

  /// Carries out a journal: the op log first, then the documents, then
  /// flushes. On redo, a document that no longer holds its old content was
  /// changed by someone since, and is left alone.
  ///
  /// Every file is opened relative to a folder descriptor from `folders`,
  /// without following links. Right before each rename the document is
  /// read again: an edit saved since the transaction read it is folded in
  /// (Store+WriteChecks.swift), never overwritten.
  ///
  /// Without `flush`, nothing is flushed: the caller flushes the file
  /// system later (a deferred transaction's checkpoint, or the one flush
  /// at the end of a redo), and a deferred transaction's documents are
  /// written into spare files (SpareFiles.swift).
  private func apply(_ journal: Journal, redo: Bool, folders: WriteFolders, flush: Bool = true) throws {
    if !journal.logBytes.isEmpty {
      try OpLog.append(
        journal.logBytes, to: journal.logPath, at: journal.logOffset, root: rootPath, sync: flush)
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
        let current = try FileSystem.openForReading(in: dirfd, name: name, path: relative(write.path)).map {
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
            || current.map({ Store.isTornWrite($0, of: write.new) }) == true
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
          spares: !flush ? spares : nil)
      }
      directories[directory] = dirfd
      if !redo && write.path == journal.writes.first?.path { testPause(at: .commit) }
    }
    if !folds.isEmpty { try logFolds(folds, sync: flush) }
    if !flush { return }
    if batch {
      try FileSystem.syncFileSystem(containing: rootPath)
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

  /// Forgets the cached clock, so the next stamp reads it afresh.
  package func resetClockCache() { clock.withLock { $0 = ClockState() } }

  /// Finishes a transaction that a crash interrupted. Call with the lock held.
  ///
  /// Transactions this process committed with their flush deferred are
  /// flushed and their records dropped, or, with `keepingDeferred`, left
  /// for the next deferred transaction to add to.
  package func recover(keepingDeferred: Bool = false) throws {
    for step in wiring.recoverySteps where step.isPending(in: self) { try step.recover(self) }
    if try finishDeferred(keeping: keepingDeferred) { return }
    guard Journal.isPending(at: journalPath) else { return }
    let records = try FileSystem.read(journalPath).map { Journal.decodeAll($0, root: rootPath).records } ?? []
    // A torn last record: its crash came before its durability point, so
    // nothing else of its transaction was touched. It is dropped.
    // Stale temp files of the journal's documents are removed by the
    // redo (``apply(_:redo:folders:flush:)``).
    for journal in records {
      try apply(journal, redo: true, folders: WriteFolders(root: rootPath), flush: false)
    }
    if !records.isEmpty {
      // One flush for every record.
      try FileSystem.syncFileSystem(containing: rootPath)
      tellLanded(records.flatMap(\.writes))
    }
    try Journal.clear(at: journalPath)
    clock.withLock { $0 = ClockState() }
  }

  // MARK: Tables

  /// A handle on the table `name`. Operations on it throw `UNKNOWN_TABLE` if
  /// `folio.yaml` does not define it.
  public func collection(_ name: String) -> DocumentCollection {
    DocumentCollection(store: self, name: name)
  }

  /// Applies one mutation, with every transform rule (docs/architecture.md, "The transform rules"), and returns what
  /// it changed.
  ///
  /// ```swift
  /// try store.apply(table: "todos", pk: "3f2a", op: .update,
  ///                 columns: ["done": true], transforms: ["views": .increment(1)])
  /// ```
  /// - Parameters:
  ///   - columns: top-level columns to assign (applied first).
  ///   - transforms: per column, `{"op": "increment", "by": n}`,
  ///     `{"op": "arrayUnion", "values": [...]}` or
  ///     `{"op": "arrayRemove", "values": [...]}` (applied on top).
  /// - Returns: what changed; empty for an update of a missing document.
  /// - Throws: `LOCAL_CONSTRAINT` for a malformed transform, an insert of an
  ///   existing pk or a key column that disagrees with `pk`, before anything
  ///   is written.
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: JSONValue] = [:],
    transforms: [String: JSONValue] = [:]
  ) throws -> [UpdateResult] {
    try write { try $0.apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms) }
  }
}
