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
  /// The clock's cache (ReplicaClock.swift).
  let clockState = Mutex<ClockState>(ClockState())
  /// The newest segment of this replica's op log, once found; -1 before.
  let opLogSegment = Mutex<Int>(-1)
  /// The tables a partial replica holds, once read (Store+Tables.swift):
  /// nil before, `.some(nil)` for a full replica.
  let heldTableNamesCache = Mutex<Set<String>??>(nil)
  /// Why the transaction an earlier process left in the journal could not
  /// be completed, if it could not (StoreRecovery.swift).
  let recoveryFailure = Mutex<FolioError?>(nil)
  /// When the last transaction committed here became visible
  /// (Store+Writes.swift).
  let lastCommitInstant = Mutex<Int>(0)
  /// Transactions committed here whose files are not flushed yet
  /// (StoreWriter+DeferredFlush.swift). Changed only with the store lock held.
  let deferredFlush = Mutex<DeferredFlush?>(nil)
  /// The files deferred transactions write again (SpareFiles.swift).
  let spares: SpareFiles
  /// One checkpoint of deferred transactions at a time, since their
  /// flushes run without the store lock; and whether one is queued.
  let checkpointSerial = Mutex(())
  let checkpointQueued = Mutex(false)
  /// Where the `async` forms of the blocking calls run (Store+Writes.swift):
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
    try Store.verifyFolders(of: config, under: rootPath)
    if Journal.isPending(at: journalPath)
      || wiring.recoverySteps.contains(where: { $0.isPending(in: self) })
    {
      try recovery.atOpen()
    }
  }

  /// Refuses a table folder, or the op log folder, that is a symbolic link
  /// or lies on a path through one: reads would show, and writes change,
  /// files outside the store. A folder that is missing is fine (it is made
  /// on the first write); one that is a file is found when written to.
  /// - Throws: `UNSAFE_PATH` naming the link.
  private static func verifyFolders(of config: Config, under rootPath: String) throws {
    let paths = config.tables.map(\.path) + [Store.opsFolder]
    for path in paths {
      do {
        if let fd = try FileSystem.openDirectory(path, under: rootPath, create: false) { close(fd) }
      } catch let error as FolioError where error.code == .unsafePath {
        // A file where a folder should be is not a link: no document can
        // be read through it, and a write says what is wrong.
        guard error.message.contains("symbolic link") else { continue }
        throw error
      }
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
  /// This replica's op log: the newest segment of it, where ops are
  /// appended (see ``OpLogSegments/segmentBytes``).
  package var opLogPath: String { rootPath + "/" + Store.opsFolder + "/" + opLogName }

  /// The file name of this replica's op log segment that ops go to (see
  /// ``OpLogSegments/activeName``).
  package var opLogName: String { opLogSegments.activeName }

  // MARK: Parts

  /// This replica's op log segments.
  package var opLogSegments: OpLogSegments { OpLogSegments(store: self) }

  /// This replica's clock.
  package var clock: ReplicaClock { ReplicaClock(store: self) }

  /// What carries transactions to disk.
  package var writer: StoreWriter { StoreWriter(store: self) }

  /// What completes interrupted writes.
  package var recovery: StoreRecovery { StoreRecovery(store: self) }

  /// The evicted documents' list.
  package var evictions: EvictionList { EvictionList(store: self) }

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

  /// Reads and parses the document file at `path`; nil if there is none.
  /// - Throws: `INVALID_JSON` at `file:line:col`, or `INVALID_DOCUMENT` if
  ///   the file holds JSON that is not an object.
  package func readDocument(at path: String) throws -> (bytes: [UInt8], object: JSONObject)? {
    guard let bytes = try FileSystem.read(path) else { return nil }
    let name = relative(path)
    let value = try JSONValue(parsing: bytes, file: name)
    guard case .object(let object) = value else {
      throw FolioError(
        .invalidDocument, "a document must be a JSON object, not \(value.kindName)",
        location: .init(file: name, line: 1, column: 1))
    }
    return (bytes, object)
  }
}
