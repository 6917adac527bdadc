import FolioCore
import FolioJSON
import FolioSystem
import Synchronization

/// How many document files queries have read in this process, per table
/// folder (tests use it to check that an indexed page reads only what it
/// returns).
///
/// Counting is off until something asks for a figure (or ``enable()``
/// runs): every count takes a process-wide lock, which a server's
/// concurrent queries would otherwise contend on for each document.
enum QueryStatistics {
  /// The kinds of index check (see ``TableIndex/verify(contents:watcher:key:drain:publisher:)``).
  enum Check: Hashable {
    /// A stat of every file.
    case full
    /// Only the documents named by inotify events.
    case changed
    /// A publisher's answer, plus the entries it cannot vouch for.
    case trusted
    /// A walk of the packed cache, checking each record against the index
    /// (see ``PackValidation``).
    case pack
    /// A check of the packed cache saved by another process, read back
    /// (see ``PackCheckFile``).
    case savedPack
  }

  private static let counting = Atomic<Bool>(false)
  private static let reads = Mutex<[String: Int]>([:])
  private static let packed = Mutex<[String: Int]>([:])
  private static let checks = Mutex<[String: [Check: Int]]>([:])

  /// Turns counting on for the rest of the process.
  static func enable() { counting.store(true, ordering: .relaxed) }
  private static var isCounting: Bool { counting.load(ordering: .relaxed) }

  /// Counts `n` documents taken from the packed cache (``PackedDocuments``).
  static func countPacked(_ n: Int, folder: @autoclosure () -> String) {
    guard isCounting else { return }
    packed.withLock { $0[folder(), default: 0] += n }
  }
  static func documentsPacked(folder: String) -> Int {
    enable()
    return packed.withLock { $0[folder] ?? 0 }
  }
  static func countRead(folder: @autoclosure () -> String) {
    guard isCounting else { return }
    reads.withLock { $0[folder(), default: 0] += 1 }
  }
  static func documentsRead(folder: String) -> Int {
    enable()
    return reads.withLock { $0[folder] ?? 0 }
  }
  static func countCheck(_ check: Check, folder: @autoclosure () -> String) {
    guard isCounting else { return }
    checks.withLock { $0[folder(), default: [:]][check, default: 0] += 1 }
  }
  static func checks(_ check: Check, folder: String) -> Int {
    enable()
    return checks.withLock { $0[folder]?[check] ?? 0 }
  }
}

/// The order indexes this process has loaded, one per store and table, so
/// that a second query does not read the base file again, and the inotify
/// watches on their folders. Each is checked against the files on every use
/// (see ``TableIndex/verify(contents:watcher:key:drain:publisher:)`` for
/// how cheaply).
package enum OrderIndexCache {
  /// TableIndex and IndexWatcher are not Sendable: they are only touched
  /// inside this lock.
  struct State: ~Copyable {
    var indexes: [String: TableIndex] = [:]
    /// Made on first use; nil after that if the process can have no
    /// inotify instance.
    var watcher: IndexWatcher?
    var triedWatcher = false
  }

  private static let state = Mutex<State>(State())

  /// Whether indexes watch their folders (on by default). A watch pays off
  /// from the second query of a process on; a process that runs one query
  /// and exits (a `folio query` in a shell loop) turns it off, as closing
  /// an inotify instance that holds a watch makes the process's exit wait
  /// for the kernel (a few milliseconds, more than the query itself).
  private static let watching = Atomic<Bool>(true)

  /// Sets whether indexes watch their folders from now on (see above); call
  /// it before the first query.
  package static func setWatchesFolders(_ on: Bool) { watching.store(on, ordering: .relaxed) }

  /// Runs `body` while no query of this process can drain the inotify
  /// queue (for tests that overflow it).
  static func withoutDraining<R>(_ body: () throws -> R) rethrows -> R {
    try state.withLock { _ in try body() }
  }

  /// Drops this process's copy of `table`'s index, so that the next query
  /// loads it from disk as a new process would (tests).
  static func forget(store: Store, table: TableConfig) {
    state.withLock { _ = $0.indexes.removeValue(forKey: store.rootPath + "\u{0}" + table.name) }
  }

  /// A checked view of `table`'s index.
  /// - Parameter contents: whether document contents matter (see
  ///   ``TableIndex/fullCheck(contents:)``).
  static func snapshot(store: Store, table: TableConfig, contents: Bool) throws -> IndexSnapshot {
    var missedPublisher = false
    let snapshot = try state.withLock { state in
      let index = try check(
        &state, store: store, table: table, contents: contents, askPublisher: true,
        missedPublisher: &missedPublisher)
      return IndexSnapshot(index)
    }
    // Outside the lock: what the link does about it (start a daemon) may
    // take a few milliseconds.
    if missedPublisher { publisherLink?.publisherMissed(store: store, documents: snapshot.approximateCount) }
    return snapshot
  }

  /// Loads and checks `table`'s index.
  /// - Parameter missedPublisher: set when the check asked for a publisher,
  ///   found none and took the full check.
  private static func check(
    _ state: inout State, store: Store, table: TableConfig, contents: Bool, askPublisher: Bool,
    missedPublisher: inout Bool
  ) throws -> TableIndex {
    let (key, index) = try self.index(in: &state.indexes, store: store, table: table)
    try index.load()
    if !state.triedWatcher && watching.load(ordering: .relaxed) {
      state.triedWatcher = true
      state.watcher = IndexWatcher()
    }
    drain(&state)
    let indexDirectory = store.privateDirectory + "/index"
    // A publisher in this process would wait for this very lock.
    var link = askPublisher ? publisherLink : nil
    if link?.isPublishing(indexDirectory: indexDirectory) == true { link = nil }
    var reached: Bool?
    let folder = store.directory(of: table)
    let before =
      IndexDebug.isOn
      ? (QueryStatistics.checks(.full, folder: folder), QueryStatistics.checks(.trusted, folder: folder))
      : (0, 0)
    try index.verify(
      contents: contents, watcher: state.watcher, key: key, drain: { drain(&state) },
      publisher: link.map { link in
        { () -> PublisherAnswer? in
          var answered = false
          defer { reached = answered }
          return link.ask(
            indexDirectory: indexDirectory, table: table.name, signature: index.signature, reached: &answered)
        }
      })
    if reached == false { missedPublisher = true }
    if IndexDebug.isOn && askPublisher {
      let full = QueryStatistics.checks(.full, folder: folder) > before.0
      let trusted = QueryStatistics.checks(.trusted, folder: folder) > before.1
      let how =
        trusted
        ? "trusted the publisher's answer"
        : full
          ? "full stat check (\(reached == false ? "no publisher" : reached == true ? "publisher could not vouch" : "publisher not asked"))"
          : "checked the changes inotify named"
      IndexDebug.log("table \(table.name): \(how)")
    }
    return index
  }

  /// Hands every queued inotify event to its index.
  private static func drain(_ state: inout State) {
    guard let watcher = state.watcher else { return }
    let indexes = state.indexes
    let complete = watcher.drain { owner, watch, event in
      indexes[owner]?.note(event, watch: watch, watcher: watcher, key: owner)
    }
    if !complete { for (_, index) in indexes { index.noteOverflow() } }
  }

  /// For a publisher: checks `table`'s index and returns the state of its
  /// files that describes the folder now (see ``TableIndex/publishableState()``);
  /// nil when it cannot vouch for any.
  package static func publishableState(store: Store, table: TableConfig) throws -> (
    generation: UInt64, logSize: Int, signature: String, device: UInt64, inode: UInt64
  )? {
    try state.withLock { state in
      for attempt in 0..<3 {
        var missed = false
        let index = try check(
          &state, store: store, table: table, contents: true, askPublisher: false, missedPublisher: &missed)
        guard let watch = index.watch else { return nil }
        if let (generation, logSize) = index.publishableState() {
          return (generation, logSize, index.signature, watch.device, watch.inode)
        }
        // Replay the log again (another process appended, or a repair was
        // not written), and at last write the checked state as a new base.
        if attempt == 1 { try index.compact() } else { index.forgetLog() }
      }
      return nil
    }
  }

  /// Tells the index of `table` that the documents in `changes` were written
  /// or removed: each with its new bytes if known (empty for a removal),
  /// else nil to read the file. This is the hook for `Store.commit` and for
  /// code that writes document files directly (merges). Only an index
  /// already built is updated; the next query finds anything this misses by
  /// stat data.
  static func documentsChanged(store: Store, table: TableConfig, changes: [(pk: String, bytes: [UInt8]?)]) {
    state.withLock { state in
      guard let (_, index) = try? self.index(in: &state.indexes, store: store, table: table),
        (try? index.load(buildIfMissing: false)) == true
      else { return }
      var records: [IndexLog.Record] = []
      for (pk, known) in changes {
        guard let path = try? store.documentPath(table: table, pk: pk) else { continue }
        let checkedAt = FileStat.now()
        guard let stat = FileStat.of(path) else {
          records.append(.document(pk: pk, entry: nil))
          continue
        }
        let object: JSONObject?
        if let known, !known.isEmpty {
          object = (try? JSONValue(parsing: known))?.objectValue
        } else {
          object = (try? store.readDocument(at: path))??.object
        }
        // Unreadable: leave it to the next query's check, which reports it.
        guard let object else { continue }
        records.append(
          .document(
            pk: pk, entry: IndexEntry(stat: stat, checkedAt: checkedAt, values: index.values(of: object))))
      }
      if !records.isEmpty { index.record(records, persist: true) }
    }
  }

  private static func index(in indexes: inout [String: TableIndex], store: Store, table: TableConfig) throws
    -> (key: String, index: TableIndex)
  {
    let key = store.rootPath + "\u{0}" + table.name
    if let index = indexes[key], index.table == table { return (key, index) }
    let index = TableIndex(
      table: table, folder: store.directory(of: table), indexDirectory: store.privateDirectory + "/index")
    indexes[key] = index
    return (key, index)
  }
}

/// An immutable view of a table's index after a check: what a query runs on,
/// outside the cache's lock.
struct IndexSnapshot: Sendable {
  let base: IndexBase?
  let overridden: OverriddenDocuments
  let overlay: [(pk: String, entry: IndexEntry)]
  /// What is worked out once per state of the index and shared by every
  /// snapshot of it (the overlay's sorted runs, the packed cache checked
  /// against it): a server's concurrent pages would otherwise each redo it.
  let memo: SnapshotMemo
  let keys: [FieldPath]
  /// The index lock, which also guards the table's ``DocumentPack``.
  let lockPath: String
  /// The table's document files that did not parse when last read, by
  /// pk: a query leaves them out and names them.
  let unreadable: [String: FolioError]

  /// About how many documents the table holds (the base's, plus what the
  /// overlay adds), without walking anything.
  var approximateCount: Int { (base?.count ?? 0) + overlay.count }

  init(_ index: TableIndex) {
    base = index.base
    overridden = index.overridden
    if let shared = index.sharedOverlay, shared.generation == index.overlayGeneration {
      (overlay, memo) = (shared.items, shared.memo)
    } else {
      overlay = index.overlay.values.compactMap { item in item.entry.map { (item.pk, $0) } }
      memo = SnapshotMemo()
      index.sharedOverlay = (index.overlayGeneration, overlay, memo)
    }
    keys = index.keys
    lockPath = index.lockPath
    unreadable = Dictionary(
      index.unreadable.map { ($0.key.string, $0.value) }, uniquingKeysWith: { a, _ in a })
  }

  /// A function from a live pk to its value of key `key` (``OrderValue/null``
  /// for a pk the index does not hold).
  func lookup(key: Int) -> (String) -> OrderValue {
    var fresh: [ExactKey: IndexEntry] = [:]
    for item in overlay { fresh[ExactKey(item.pk)] = item.entry }
    return { [base] pk in
      if let entry = fresh[ExactKey(pk)] { return OrderValue(entry.values[key]) }
      guard let base, let doc = base.find(pk) else { return .null }
      return OrderValue(base.value(doc, key: key))
    }
  }

  /// The runs that hold the documents in the order of key `key` (nil: pk).
  func runs(key: Int?, constant: OrderValue) -> [any OrderedRun] {
    var runs: [any OrderedRun] = []
    if let base { runs.append(BaseRun(base: base, key: key, constant: constant, overridden: overridden)) }
    if !overlay.isEmpty {
      runs.append(
        memo.run(key: key, constant: constant) {
          ArrayRun(
            sorting: overlay.map { item in
              (key.map { OrderValue(item.entry.values[$0]) } ?? constant, item.pk)
            })
        })
    }
    return runs
  }
}
