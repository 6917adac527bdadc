import FolioCore
import FolioJSON
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// One table's index as this process knows it: the base file, plus an
/// overlay of what changed since (from the log, and from repairs this
/// process made). Everything in it is a cache of the document files, checked
/// against their stat data before a query trusts it.
///
/// Used only inside ``OrderIndexCache``'s lock.
final class TableIndex {
  let table: TableConfig
  let folder: String
  let basePath: String
  let logPath: String
  /// The table's packed cache (``PackedDocuments/path(store:table:)``).
  let packPath: String
  let lockPath: String
  /// The paths the index holds values for, from `folio.yaml`: the order
  /// keys, then the secondary indexes (``TableConfig/indexedPaths``). Both
  /// kinds are kept, checked and repaired alike; only their use differs.
  let keys: [FieldPath]
  /// What the base must have been built for: folder, key column, indexed
  /// paths.
  let signature: String

  private(set) var base: IndexBase?
  private(set) var baseIdentity: FileStat?
  private var logIdentity: FileStat?
  /// Changes over the base, by pk; a nil entry is a document that is gone.
  private(set) var overlay: [ExactKey: (pk: String, entry: IndexEntry?)] = [:]
  /// Base documents that the overlay replaces or removes.
  private(set) var overridden = OverriddenDocuments(count: 0)
  /// Moves on with every change to the overlay (or to the base under it),
  /// so that snapshots of an unchanged index share one copy of the overlay
  /// and its sorted runs (see ``IndexSnapshot``).
  private(set) var overlayGeneration = 0
  /// The overlay as the last snapshot took it; only the cache's lock
  /// touches it.
  var sharedOverlay: (generation: Int, items: [(pk: String, entry: IndexEntry)], memo: SnapshotMemo)?
  private var directory: FileStat?
  private var directoryCheckedAt: Int64 = 0

  /// How many bytes of the log the in-memory state was loaded from, or has
  /// appended since, and where each document record of it ends.
  private(set) var loadedLogSize = 0
  private(set) var loadedRecordEnds: [(pk: String, end: Int)] = []
  /// Whether the in-memory state is exactly the base plus the first
  /// `loadedLogSize` bytes of the log: false once a repair could not be
  /// appended, or another process appended in between.
  private(set) var exactReplay = true

  /// The inotify watch on the folder (see ``IndexWatcher``), and what the
  /// last full check under it covered: the set of documents (`cleanListing`)
  /// and also their contents (`cleanContents`). While one holds, the next
  /// check re-reads only `pending`: the documents named by events since.
  var watch: IndexWatcher.Watch?
  var cleanListing = false
  var cleanContents = false
  var pending = Set<ExactKey>()

  /// The document files found not to parse when last read, by pk, with
  /// their errors: queries leave them out and name them.
  var unreadable: [ExactKey: FolioError] = [:]

  init(table: TableConfig, folder: String, indexDirectory: String) {
    self.table = table
    self.folder = folder
    let name = IndexNames.fileStem(table.name)
    basePath = indexDirectory + "/" + name + ".base"
    logPath = indexDirectory + "/" + name + ".log"
    packPath = indexDirectory + "/" + name + ".docs"
    lockPath = indexDirectory + "/lock"
    keys = table.indexedPaths.map { FieldPath($0) }
    // A hashed table's files are elsewhere: its base is not a flat one's.
    let place = table.layout == .flat ? table.path : table.path + "\u{1}" + table.layout.rawValue
    signature = ([place, table.key ?? ""] + table.indexedPaths).concatenated(separator: "\u{0}")
  }

  /// The number of the indexed path `path`, if it is one.
  func keyNumber(_ path: FieldPath) -> Int? { keys.firstIndex(of: path) }

  /// The entry for `doc` values of a parsed document.
  func values(of document: JSONObject) -> [JSONValue?] {
    keys.map { IndexEntry.indexed(document.childValue(at: $0)) }
  }

  // MARK: Loading

  /// Brings the in-memory state in line with the files in `.git/folio/index/`,
  /// building the base from the documents if there is none (or it was built
  /// for another config) unless `buildIfMissing` is false.
  /// - Returns: whether a base is loaded.
  @discardableResult
  func load(buildIfMissing: Bool = true) throws -> Bool {
    let identity = FileStat.of(basePath)
    if identity == nil || identity != baseIdentity {
      // Another base (a compaction elsewhere) may differ anywhere.
      cleanListing = false
      cleanContents = false
      base = nil
      baseIdentity = nil
      logIdentity = nil
      if let candidate = IndexBase(contentsOf: basePath),
        candidate.signature == signature, candidate.keyCount == keys.count
      {
        base = candidate
        baseIdentity = identity
      } else {
        guard buildIfMissing else { return false }
        try rebuild()
        return true
      }
      directory = base!.directory
      directoryCheckedAt = base!.directoryCheckedAt
      resetOverlay()
    }
    let log = FileStat.of(logPath)
    if log != logIdentity {
      // Start over from the base and the whole log: the log is short, and a
      // repair of ours that the log does not hold is found again by the
      // stat check, or, under a watch, by checking again every document
      // whose entry the reload may change.
      for (key, _) in overlay { pending.insert(key) }
      directory = base!.directory
      directoryCheckedAt = base!.directoryCheckedAt
      resetOverlay()
      if let (records, ends, size) = IndexLog.read(
        logPath, generation: base!.generation, keyCount: keys.count)
      {
        for (record, end) in zip(records, ends) {
          apply(record)
          if case .document(let pk, _) = record {
            loadedRecordEnds.append((pk, end))
            pending.insert(ExactKey(pk))
          }
        }
        loadedLogSize = size
      }
      logIdentity = log
    }
    return true
  }

  /// Makes the next ``load(buildIfMissing:)`` read the log again.
  func forgetLog() { logIdentity = nil }

  private func resetOverlay() {
    overlayGeneration += 1
    overlay = [:]
    overridden = OverriddenDocuments(count: base?.count ?? 0)
    loadedLogSize = 0
    loadedRecordEnds = []
    exactReplay = true
  }

  private func apply(_ record: IndexLog.Record) {
    switch record {
    case .document(let pk, let entry):
      // Checked at time zero only when it did not parse (see
      // readEntryAndDocument): anything else says it reads now, or is gone.
      if entry?.checkedAt != 0 { unreadable.removeValue(forKey: ExactKey(pk)) }
      overlayGeneration += 1
      overlay[ExactKey(pk)] = (pk, entry)
      if let doc = base?.find(pk) { overridden.insert(doc) }
    case .directory(let stat, let checkedAt):
      directory = stat
      directoryCheckedAt = checkedAt
    }
  }

  // MARK: Verification

  /// Checks the index against the files and repairs what changed behind
  /// Folio's back, reading only the files whose stat data changed.
  ///
  /// - Parameter contents: whether document contents matter (ordering by an
  ///   order key), which takes a stat of every file; otherwise only the set
  ///   of documents matters, which takes a stat of the folder.
  func fullCheck(contents: Bool) throws {
    QueryStatistics.countCheck(.full, folder: folder)
    var changes: [IndexLog.Record] = []
    let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dirfd < 0 {
      // No folder: no documents.
      for (_, item) in overlay where item.entry != nil { changes.append(.document(pk: item.pk, entry: nil)) }
      if let base {
        for doc in 0..<base.count where !overridden[doc] {
          changes.append(.document(pk: base.pk(doc), entry: nil))
        }
      }
      if !changes.isEmpty { record(changes, persist: true) }
      return
    }
    defer { close(dirfd) }

    let directoryTime = FileStat.now()
    var st = stat()
    guard fstat(dirfd, &st) == 0 else { throw FileSystem.error(errno, "fstat", path: folder) }
    let directoryNow = FileStat(st)
    // A hashed or nested table's files are in folders, whose changes the folder's
    // own stat data does not show: it is listed every time.
    let listed =
      table.layout != .flat || directoryNow != directory
      || directory.map { $0.isRacy(checkedAt: directoryCheckedAt) } ?? true

    var suspects: [String] = []
    if contents {
      suspects = sweep(dirfd: dirfd)
    }
    var known = Set<ExactKey>()
    if listed {
      let names = try table.listDocumentNames(in: folder) ?? []
      var present = Set<ExactKey>()
      for name in names {
        guard let pk = table.pk(fromDocumentName: name) else { continue }
        let key = ExactKey(pk)
        present.insert(key)
        if !isLive(pk) && !known.contains(key) {
          suspects.append(pk)
          known.insert(key)
        }
      }
      // Gone from the listing: gone.
      for (key, item) in overlay where item.entry != nil && !present.contains(key) {
        changes.append(.document(pk: item.pk, entry: nil))
      }
      if let base {
        for doc in 0..<base.count where !overridden[doc] {
          let pk = base.pk(doc)
          if !present.contains(ExactKey(pk)) { changes.append(.document(pk: pk, entry: nil)) }
        }
      }
    }
    for pk in suspects {
      let fresh = try readEntry(pk: pk, dirfd: dirfd)
      if fresh != currentEntry(pk) || fresh?.isRacy == false && currentEntry(pk)?.isRacy == true {
        changes.append(.document(pk: pk, entry: fresh))
      }
    }
    if listed && table.layout == .flat && !directoryNow.isRacy(checkedAt: directoryTime) {
      changes.append(.directory(directoryNow, checkedAt: directoryTime))
    }
    if !changes.isEmpty { record(changes, persist: true) }
  }

  /// Whether the index holds a live entry for `pk`.
  func isLive(_ pk: String) -> Bool {
    if let item = overlay[ExactKey(pk)] { return item.entry != nil }
    return base?.find(pk) != nil
  }

  func currentEntry(_ pk: String) -> IndexEntry? {
    if let item = overlay[ExactKey(pk)] { return item.entry }
    return base?.find(pk).map { base!.entry($0) }
  }

  /// The pks whose file's stat data differs from the index's, or whose
  /// record is racy. The stats run on every core.
  private func sweep(dirfd: Int32) -> [String] {
    var suspects: [String] = []
    for (_, item) in overlay {
      guard let entry = item.entry else { continue }
      if entry.isRacy || Self.statAt(dirfd, pk: item.pk, table: table) != entry.stat {
        suspects.append(item.pk)
      }
    }
    guard let base else { return suspects }
    let count = base.count
    let workers = Swift.max(1, Swift.min(ProcessInfo.processInfo.activeProcessorCount, 8))
    let chunk = (count + workers - 1) / workers
    let found = Mutex<[Int]>([])
    let overridden = self.overridden
    let layout = table.layout
    DispatchQueue.concurrentPerform(iterations: workers) { worker in
      var local: [Int] = []
      var name = [CChar](
        repeating: 0, count: TableLayout.maximumFolderBytes + PrimaryKey.maximumFileNameLength + 1)
      var folder = [UInt8](repeating: 0, count: TableLayout.maximumFolderBytes)
      let end = Swift.min(count, (worker + 1) * chunk)
      var st = stat()
      var doc = worker * chunk
      while doc < end {
        defer { doc += 1 }
        if overridden[doc] { continue }
        let ok = base.withPKBytes(doc) {
          IndexNames.fileName(of: $0, into: &name, layout: layout, folder: &folder)
        }
        guard ok, fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
          local.append(doc)
          continue
        }
        let recorded = base.stat(doc)
        if FileStat(st) != recorded || recorded.isRacy(checkedAt: base.checkedAt(doc)) { local.append(doc) }
      }
      found.withLock { $0 += local }
    }
    return suspects + found.withLock { $0 }.sorted().map { base.pk($0) }
  }

  static func statAt(_ dirfd: Int32, pk: String, table: TableConfig) -> FileStat? {
    guard let name = try? table.documentName(for: pk) else { return nil }
    var st = stat()
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? FileStat(st) : nil
  }

  /// Reads document `pk` afresh; nil if it is gone or not a regular file.
  /// - Throws: `INVALID_JSON` for a document that does not parse.
  func readEntry(pk: String, dirfd: Int32) throws -> IndexEntry? {
    try readEntryAndDocument(pk: pk, dirfd: dirfd)?.entry
  }

  /// ``readEntry(pk:dirfd:)``, with the document it read (nil for a file
  /// that does not parse).
  ///
  /// A file that does not parse (a truncated save, a stray comma) is still
  /// a document of the table, one whose values are unknown: it gets an
  /// entry with no values, checked at time zero so that every check of the
  /// contents reads it again, and its error goes to ``unreadable``, for
  /// each query to name. Failing here instead would take down every query
  /// on the table for one file.
  func readEntryAndDocument(pk: String, dirfd: Int32) throws -> (entry: IndexEntry, document: JSONObject?)? {
    guard let name = try? table.documentName(for: pk) else { return nil }
    let checkedAt = FileStat.now()
    let read: (object: JSONObject, stat: stat)?
    do {
      read = try Self.readDocument(named: name, in: dirfd, folder: folder, table: table)
    } catch let error as FolioError where error.isUnreadableDocument {
      unreadable[ExactKey(pk)] = error
      var st = stat()
      guard fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
      return (IndexEntry(stat: FileStat(st), checkedAt: 0, values: keys.map { _ in nil }), nil)
    }
    unreadable.removeValue(forKey: ExactKey(pk))
    guard let (object, st) = read else { return nil }
    return (IndexEntry(stat: FileStat(st), checkedAt: checkedAt, values: values(of: object)), object)
  }

  /// Reads and parses the document file `name` in the open folder `dirfd`
  /// (`folder` on disk), with its stat data; nil when it is gone or is not
  /// a regular file. A link is never followed: it is not a document
  /// (ELOOP reads as gone).
  /// - Throws: `INVALID_JSON` or `INVALID_DOCUMENT` at the file's position.
  static func readDocument(named name: String, in dirfd: Int32, folder: String, table: TableConfig) throws
    -> (object: JSONObject, stat: stat)?
  {
    let fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    if fd < 0 { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
    QueryStatistics.countRead(folder: folder)
    let bytes = try FileSystem.readAll(fd, path: folder + "/" + name)
    let display = table.path + "/" + name
    let value = try JSONValue(parsing: bytes, file: display)
    guard case .object(let object) = value else {
      throw FolioError(
        .invalidDocument, "a document must be a JSON object, not \(value.kindName)",
        location: .init(file: display, line: 1, column: 1), table: table.name)
    }
    return (object, st)
  }

  // MARK: Recording

  /// Applies `changes` in memory and, if asked and the index lock is free,
  /// appends them to the log; then compacts if the overlay has grown.
  func record(_ changes: [IndexLog.Record], persist: Bool) {
    guard !changes.isEmpty else { return }
    for change in changes { apply(change) }
    var appended = false
    if persist, let base {
      IndexNames.withLock(lockPath, blocking: false) {
        // Another process may have compacted since we loaded: then the log is
        // not ours to append to.
        guard FileStat.of(basePath) == baseIdentity else { return }
        let before = FileStat.of(logPath)
        let start = Int(before?.size ?? 0)
        var bytes: [UInt8] = []
        if before == nil { bytes = IndexLog.header(generation: base.generation) }
        var ends: [(pk: String, end: Int)] = []
        for change in changes {
          bytes += IndexLog.encode(change)
          if case .document(let pk, _) = change { ends.append((pk, start + bytes.count)) }
        }
        guard (try? IndexNames.append(bytes, to: logPath)) != nil else { return }
        appended = true
        if before == logIdentity, start == loadedLogSize {
          loadedLogSize = start + bytes.count
          loadedRecordEnds += ends
          logIdentity = FileStat.of(logPath)
        } else {
          // Another process appended since we loaded: read it all again
          // next time rather than skip its records.
          logIdentity = nil
          exactReplay = false
        }
      }
    }
    if !appended { exactReplay = false }
    // The overlay grows with the documents changed, the log with the
    // changes: a counter incremented all day is one overlay entry and a
    // record per increment, which every process that loads the index would
    // replay.
    if persist, let base,
      overlay.count > Swift.max(256, base.count / 8) || loadedRecordEnds.count > Swift.max(1024, base.count)
    {
      try? compact()
    }
  }

  /// Writes the current state as a new base, with an empty log.
  func compact() throws {
    var entries: [(pk: String, entry: IndexEntry)] = []
    if let base {
      entries.reserveCapacity(base.count + overlay.count)
      for doc in 0..<base.count where !overridden[doc] { entries.append((base.pk(doc), base.entry(doc))) }
    }
    for (_, item) in overlay { if let entry = item.entry { entries.append((item.pk, entry)) } }
    try write(entries, directory: directory ?? FileStat(inode: 0, size: 0, mtime: 0, ctime: 0))
  }

  /// Builds the base from the document files.
  private func rebuild() throws {
    let directoryTime = FileStat.now()
    let directoryNow = FileStat.of(folder) ?? FileStat(inode: 0, size: 0, mtime: 0, ctime: 0)
    let names = (try table.listDocumentNames(in: folder) ?? []).compactMap { table.pk(fromDocumentName: $0) }
    var entries: [(pk: String, entry: IndexEntry)] = []
    entries.reserveCapacity(names.count)
    let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { if dirfd >= 0 { close(dirfd) } }
    if dirfd >= 0 {
      if keys.isEmpty {
        // Only the pks and stat data matter: no file needs reading.
        for pk in names {
          let checkedAt = FileStat.now()
          if let stat = Self.statAt(dirfd, pk: pk, table: table) {
            entries.append((pk, IndexEntry(stat: stat, checkedAt: checkedAt, values: [])))
          }
        }
      } else {
        // A file the packed cache vouches for is not read; a table without
        // a pack gets one from the reads, which are made anyway.
        let packed = entriesFromPack(dirfd: dirfd)
        let filler =
          packed == nil ? PackFiller(path: packPath, lockPath: lockPath, table: table, replacing: false) : nil
        for pk in names {
          if let entry = packed?[pk] {
            entries.append((pk, entry))
          } else if let (entry, document) = try readEntryAndDocument(pk: pk, dirfd: dirfd) {
            entries.append((pk, entry))
            if let document {
              filler?.add(pk: pk, document: document, stat: entry.stat, readAt: entry.checkedAt)
            }
          }
        }
        filler?.finish()
      }
    }
    // A folder changed within the racy window is listed again next time.
    let trusted =
      directoryNow.isRacy(checkedAt: directoryTime)
      ? FileStat(inode: 0, size: 0, mtime: 0, ctime: 0) : directoryNow
    directoryCheckedAt = directoryTime
    try write(entries, directory: trusted)
  }

  private func write(_ entries: [(pk: String, entry: IndexEntry)], directory: FileStat) throws {
    var generator = SystemRandomNumberGenerator()
    let generation = generator.next() as UInt64
    let bytes = IndexBase.encode(
      signature: signature, generation: generation, directory: directory,
      directoryCheckedAt: directoryCheckedAt, keyCount: keys.count, entries: entries)
    guard let fresh = IndexBase(bytes: bytes) else { preconditionFailure("index base does not read back") }
    try FileSystem.makeDirectories(FileSystem.split(basePath).directory)
    IndexNames.withLock(lockPath, blocking: true) {
      // The log goes first: a reader that sees the new base with the old log
      // ignores the log (another generation), never the other way round.
      try? FileSystem.writeAtomically(logPath, IndexLog.header(generation: generation), sync: false)
      try? FileSystem.writeAtomically(basePath, bytes, sync: true)
    }
    base = fresh
    baseIdentity = FileStat.of(basePath)
    logIdentity = FileStat.of(logPath)
    self.directory = fresh.directory
    resetOverlay()
    loadedLogSize = Int(logIdentity?.size ?? 0)
  }
}
