import Foundation
import Glibc
import Synchronization

/// A Folio store: a git working tree with `folio.yaml` at its root, where
/// each table is a folder and each document one JSON file.
///
/// Open one with ``init(at:)`` or make one with ``create(at:config:)``. Both
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
public final class Store: Sendable {
  /// The store's root directory (where `folio.yaml` is).
  public let root: URL
  /// The parsed `folio.yaml`.
  public let config: Config
  /// This checkout's replica id (kept in `.git/folio/replica`, never committed).
  public let replicaID: String

  let rootPath: String
  let gitDirectory: String
  let privateDirectory: String
  let lock: StoreLock
  /// Live subscriptions (seed `000_*` `subscribe`), consulted by `sync`.
  let subscriptions = SubscriptionRegistry()
  /// Pulls from the remote while any subscription is alive.
  let puller = SubscriptionPuller()
  /// Live queries (Observation/), told of every commit.
  let observation = ObservationCenter()
  private let clock = Mutex<ClockState>(ClockState())
  /// When the last transaction committed here became visible
  /// (Store+Benchmark.swift).
  let lastCommitInstant = Mutex<Int>(0)
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
  static let privateFolderName = "folio"
  /// The folder, relative to the root, that holds the op logs.
  static let opsFolder = ".folio/ops"

  /// Opens the store that holds `url`: the nearest directory at or above it
  /// with a `folio.yaml`.
  ///
  /// Finishes any write that a crash interrupted before it returns.
  /// - Throws: `STORE_NOT_FOUND` if there is none; `INVALID_CONFIG` with
  ///   `folio.yaml:line:col` if the config is bad; `GIT` if the root is not a
  ///   git working tree.
  public convenience init(at url: URL) throws {
    let start = url.standardizedFileURL.path
    guard let root = Store.findRoot(from: start) else {
      throw FolioError(
        .storeNotFound,
        "no \(Config.fileName) in \(start) or any parent directory; run 'folio init' to create a store",
        path: start)
    }
    try self.init(rootPath: root)
  }

  /// A second handle on an open store with another lock timeout (tests).
  static func withLockTimeout(_ timeout: Double, rootPath: String) -> Store {
    try! Store(rootPath: rootPath, lockTimeout: timeout)
  }

  init(rootPath: String, lockTimeout: Double = StoreLock.defaultTimeout) throws {
    let config = try Config(contentsOf: URL(fileURLWithPath: rootPath + "/" + Config.fileName))
    guard let gitDirectory = try GitRepository.gitDirectory(workTree: rootPath) else {
      throw FolioError(
        .git, "\(rootPath) has a \(Config.fileName) but is not a git working tree; run 'folio init'",
        path: rootPath)
    }
    let privateDirectory = gitDirectory + "/" + Store.privateFolderName
    try FileSystem.makeDirectories(privateDirectory)
    self.rootPath = rootPath
    self.root = URL(fileURLWithPath: rootPath, isDirectory: true)
    self.config = config
    self.gitDirectory = gitDirectory
    self.privateDirectory = privateDirectory
    self.replicaID = try Store.loadReplicaID(in: privateDirectory)
    self.lock = StoreLock(path: privateDirectory + "/lock", timeout: lockTimeout)
    subscriptions.onActivityChange { [weak self] active in self?.subscriptionsChanged(active: active) }
    if Journal.isPending(at: journalPath) || ImportStaging.isPending(privateDirectory: privateDirectory)
      || FileSystem.exists(checkoutJournalPath)
    {
      try lock.withLock { try recover() }
    }
  }

  /// Makes `url` a store, or opens the store already there; safe to run twice.
  ///
  /// Creates the git repository if there is none, a minimal `folio.yaml`
  /// (or `config` if given and there is no `folio.yaml` yet), `.gitattributes`
  /// routing table files to Folio's merge driver, `.folio/ops/`, and the
  /// replica id.
  /// - Parameter mergeDriver: the `folio` program git should run as the
  ///   merge driver (registered in `.git/config` as `merge.folio.driver`).
  @discardableResult
  public static func create(at url: URL, config: Config? = nil, mergeDriver: String = "folio") throws -> Store
  {
    let start = url.standardizedFileURL.path
    let rootPath = findRoot(from: start) ?? start
    try FileSystem.makeDirectories(rootPath)
    let canonicalRoot = FileSystem.realPath(rootPath) ?? rootPath
    if try GitRepository.open(workTree: canonicalRoot) == nil {
      _ = try GitRepository.initialize(workTree: canonicalRoot)
    }
    let configPath = canonicalRoot + "/" + Config.fileName
    if !FileSystem.exists(configPath) {
      let text = (config ?? Config()).yamlText()
      try FileSystem.writeAtomically(configPath, Array(text.utf8), sync: true)
    }
    let store = try Store(rootPath: canonicalRoot)
    try FileSystem.makeDirectories(canonicalRoot + "/" + opsFolder)
    try store.writeGitAttributes()
    try store.registerMergeDriver(program: mergeDriver)
    return store
  }

  /// The nearest directory at or above `path` that holds a `folio.yaml`.
  static func findRoot(from path: String) -> String? {
    var current = FileSystem.realPath(path) ?? path
    while true {
      if FileSystem.isRegularFile(current + "/" + Config.fileName) { return current }
      if current == "/" || current.isEmpty { return nil }
      current = FileSystem.split(current).directory
    }
  }

  /// Reads the replica id, making one the first time. `O_EXCL` makes two
  /// processes that race here agree on one id.
  private static func loadReplicaID(in directory: String) throws -> String {
    let path = directory + "/replica"
    if let bytes = try FileSystem.read(path) {
      let id = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
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
      let existing = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      if !existing.isEmpty { return existing }
    }
    // An empty file from an older version of this code: replace it.
    try FileSystem.syscall("rename", path: path) { rename(temp, path) }
    try FileSystem.syncDirectory(directory)
    return id
  }

  // MARK: Paths

  var journalPath: String { privateDirectory + "/journal" }
  var evictedPath: String { privateDirectory + "/evicted.json" }
  /// This replica's op log.
  var opLogPath: String { rootPath + "/" + Store.opsFolder + "/" + replicaID + ".ndjson" }

  /// The table named `name`.
  /// - Throws: `UNKNOWN_TABLE`, listing the tables there are (see
  ///   ``Config/unknownTableError(_:)``).
  public func table(named name: String) throws -> TableConfig {
    if let table = config.table(named: name) { return table }
    throw config.unknownTableError(name)
  }

  /// The absolute folder of `table`.
  func directory(of table: TableConfig) -> String { rootPath + "/" + table.path }

  /// The absolute file of document `pk` in `table`.
  func documentPath(table: TableConfig, pk: String) throws -> String {
    do {
      return directory(of: table) + "/" + (try PrimaryKey.fileName(for: pk))
    } catch var error as FolioError {
      error.table = table.name
      throw error
    }
  }

  /// `path` relative to `root`, for messages and the journal.
  static func relative(_ path: String, to root: String) -> String {
    path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
  }

  /// `path` relative to the store root.
  func relative(_ path: String) -> String { Store.relative(path, to: rootPath) }

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
  public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
    try lock.withLock {
      try recover()
      return try writeLocked(body)
    }
  }

  /// ``write(_:)`` for callers that already hold the lock.
  func writeLocked<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
    let transaction = WriteTransaction(store: self, lastHLC: try lastHLC())
    let value = try body(transaction)
    try commit(transaction)
    return value
  }

  /// The newest HLC in this replica's log. Cached while the log's size is
  /// unchanged; otherwise read from its tail.
  func lastHLC() throws -> HLC? {
    var st = stat()
    let size = stat(opLogPath, &st) == 0 ? Int(st.st_size) : 0
    if let cached = clock.withLock({ $0.logSize == size ? $0.last : nil }) { return cached }
    var last = try OpLog.lastOp(in: opLogPath)?.hlc
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

  private func commit(_ transaction: WriteTransaction) throws {
    let ops = transaction.ops
    let writes = transaction.stagedWrites()
    if ops.isEmpty && writes.isEmpty { return }
    try FileSystem.makeDirectories(rootPath + "/" + Store.opsFolder)
    var logBytes: [UInt8] = []
    for op in ops {
      logBytes += op.json.compactBytes()
      logBytes.append(UInt8(ascii: "\n"))
    }
    let journal = Journal(
      logPath: opLogPath, logOffset: try OpLog.size(of: opLogPath), logBytes: logBytes,
      writes: writes)
    try transaction.commitEvictions(evicted: true)
    let trailer = try journal.write(to: journalPath, root: rootPath)
    var told = false
    do {
      try apply(journal, redo: false)
      // Every document is in place and flushed: the commit instant.
      lastCommitInstant.withLock { $0 = Store.wallNanos() }
      // Other processes' observers may read now (Observation/ObservationWatcher.swift).
      Journal.stampApplied(trailer, journal: journalPath)
      // Indexes and live queries hear of it before the git index and the
      // journal are brought up to date: nothing they do needs either, and
      // the truncate may wait behind other writers' flushes in the file
      // system's own journal.
      tellCommitted(writes)
      told = true
      markEvictionsInIndexIfPossible(journal.writes)
      try Journal.clear(at: journalPath)
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
    if !restored.isEmpty { markEvictionsInIndexIfPossible([], restored: restored) }
    var st = stat()
    let size = stat(opLogPath, &st) == 0 ? Int(st.st_size) : 0
    if let last = ops.map(\.hlc).max() {
      clock.withLock { state in
        if state.last.map({ $0 < last }) ?? true { state.last = last }
        state.logSize = size
      }
    }
  }

  /// Tells the order indexes and the live queries of a transaction's writes.
  private func tellCommitted(_ writes: [Journal.Write]) {
    indexDocumentsWritten(writes)  // order indexes (Query/Store+OrderIndex.swift)
    observation.didCommit(store: self, paths: writes.map(\.path))  // live queries (Observation/)
  }

  /// Carries out a journal: the op log first, then the documents, then
  /// flushes. On redo, a document that no longer holds its old content was
  /// changed by someone since, and is left alone.
  private func apply(_ journal: Journal, redo: Bool) throws {
    if !journal.logBytes.isEmpty {
      try OpLog.append(journal.logBytes, to: journal.logPath, at: journal.logOffset)
    }
    // Past a few documents, one syncfs beats an fsync per file and folder.
    let batch = journal.writes.count > 16
    var directories = Set<String>()
    for write in journal.writes {
      if redo {
        let current = try FileSystem.read(write.path)
        if let current, let new = write.new, current == new { continue }
        if current == nil && write.new == nil { continue }
        let currentHash = current.map { FNV.hex($0) }
        guard currentHash == write.oldHash else { continue }
      }
      let directory = FileSystem.split(write.path).directory
      if let bytes = write.new {
        try FileSystem.makeDirectories(directory)
        try FileSystem.writeAtomically(write.path, bytes, sync: !batch)
        directories.insert(directory)
      } else if try FileSystem.remove(write.path) {
        directories.insert(directory)
      }
      if !redo && write.path == journal.writes.first?.path { testPause(at: .commit) }
    }
    if batch {
      try FileSystem.syncFileSystem(containing: rootPath)
    } else {
      for directory in directories.sorted() { try FileSystem.syncDirectory(directory) }
    }
  }

  /// Forgets the cached clock, so the next stamp reads it afresh.
  func resetClockCache() { clock.withLock { $0 = ClockState() } }

  /// Finishes a transaction that a crash interrupted. Call with the lock held.
  func recover() throws {
    try recoverImport()
    try recoverCheckout()
    guard Journal.isPending(at: journalPath) else { return }
    guard let bytes = try FileSystem.read(journalPath),
      let journal = Journal.decode(bytes, root: rootPath)
    else {
      // Torn: the crash came before the durability point, so nothing else
      // was touched. Drop it.
      try Journal.clear(at: journalPath)
      return
    }
    for write in journal.writes { try FileSystem.remove(FileSystem.temporaryPath(for: write.path)) }
    try apply(journal, redo: true)
    markEvictionsInIndexIfPossible(journal.writes)
    try Journal.clear(at: journalPath)
    clock.withLock { $0 = ClockState() }
  }

  // MARK: Tables

  /// A handle on the table `name`. Operations on it throw `UNKNOWN_TABLE` if
  /// `folio.yaml` does not define it.
  public func collection(_ name: String) -> DocumentCollection {
    DocumentCollection(store: self, name: name)
  }

  /// Applies one mutation, with every rule of seed `002_*`, and returns what
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
