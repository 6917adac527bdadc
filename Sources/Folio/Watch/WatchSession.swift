import Glibc

/// The state of one running ``Watcher``: its inotify watches, the saves
/// waiting out their debounce, and the timers. Used only on the thread that
/// runs the watcher.
final class WatchSession {
  /// One document file, by table and file name.
  struct FileKey: Hashable {
    var table: String
    var name: String
  }

  /// What a watch is for.
  private enum Target {
    /// A table folder: its files are documents.
    case table(String)
    /// The nearest existing ancestor of table folders that do not exist
    /// yet: a folder made in it may be (or lead to) one.
    case ancestor
  }

  let store: Store
  let options: Watcher.Options
  let inotify: Inotify
  /// How changed files were settled: by hash, or by parsing.
  let counters: WatchCounters
  private let emit: (WatchEvent) -> Void
  private var targets: [Int32: Target] = [:]
  private var tableWatches: [String: Int32] = [:]
  private var debouncer: Debouncer<FileKey>
  /// Files written to in place (`IN_MODIFY`) and not closed since
  /// (`IN_CLOSE_WRITE`), with the time of the last write: a writer still
  /// has them open, so what they hold may be half a save (an in-place save
  /// truncates first, and a writer descheduled under load leaves the file
  /// empty for as long as it likes).
  private var writers: [FileKey: Double] = [:]
  private var known: KnownDocuments?
  /// Per file, the last problem reported and the bytes it was about, so a
  /// problem is reported once per save and not again on a rescan.
  private var reported: [String: String] = [:]
  /// When to scan every table again, if a scan is wanted.
  private var rescanAt: Double?
  /// Whether that scan is for lost events, to be announced as
  /// ``WatchEvent/rescanned``.
  private var overflowed = false
  private var nextCommit: Double?
  private var nextSync: Double?

  /// Events on table folders that can end a save.
  static let tableMask = UInt32(
    IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF
      | IN_MOVE_SELF | IN_ONLYDIR)
  /// Events on ancestors: folders appearing.
  static let ancestorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
  /// How long a file waits before it is tried again after a failure that
  /// may pass (the store is locked, a read failed).
  static let retryDelay = 1.0
  /// How long a file that a writer holds open must stay quiet before it is
  /// read anyway: a save normally ends with `IN_CLOSE_WRITE`, but a program
  /// may keep a file open after writing a whole document.
  static let writerPatience = 1.0

  init(
    store: Store, options: Watcher.Options, counters: WatchCounters = WatchCounters(),
    emit: @escaping (WatchEvent) -> Void
  ) throws {
    self.store = store
    self.options = options
    self.counters = counters
    self.emit = emit
    self.inotify = try Inotify()
    self.debouncer = Debouncer(delay: options.debounce.seconds)
  }

  /// Puts the watches in place, records what changed while nothing watched,
  /// and starts the timers. Watching comes first, so a save made during the
  /// catch-up is seen by one or the other.
  func start() throws {
    _ = try installWatches()
    try catchUp()
    let now = Clock.monotonicSeconds()
    nextCommit = options.commitEvery.map { now + $0.seconds }
    nextSync = options.syncEvery.map { now + $0.seconds }
    emit(.ready(tables: store.config.tables.map(\.name)))
  }

  /// The earliest moment something is due, or nil to wait for events only.
  var nextDeadline: Double? {
    [rescanAt, debouncer.nextDeadline, nextCommit, nextSync].compactMap { $0 }.min()
  }

  // MARK: Watches

  /// Watches every table folder that exists, and the nearest existing
  /// ancestor of each that does not.
  /// - Returns: the tables whose folder is watched now but was not before.
  @discardableResult
  func installWatches() throws -> [String] {
    var added: [String] = []
    var ancestors = Set<Int32>()
    for table in store.config.tables {
      let directory = store.directory(of: table)
      if let watch = try inotify.addWatch(directory, mask: Self.tableMask) {
        if tableWatches[table.name] != watch { added.append(table.name) }
        tableWatches[table.name] = watch
        targets[watch] = .table(table.name)
        continue
      }
      tableWatches[table.name] = nil
      while true {
        var ancestor = FileSystem.split(directory).directory
        var next = directory
        while ancestor.count > store.rootPath.count && !FileSystem.isDirectory(ancestor) {
          next = ancestor
          ancestor = FileSystem.split(ancestor).directory
        }
        if let watch = try inotify.addWatch(ancestor, mask: Self.ancestorMask) {
          ancestors.insert(watch)
          if case .table? = targets[watch] {} else { targets[watch] = .ancestor }
        }
        // A folder made below the ancestor before its watch was in place
        // sent it no event: go one level deeper instead.
        guard FileSystem.isDirectory(next) else { break }
        if next == directory, let watch = try inotify.addWatch(directory, mask: Self.tableMask) {
          added.append(table.name)
          tableWatches[table.name] = watch
          targets[watch] = .table(table.name)
          break
        }
      }
    }
    // Ancestors that no longer lead to a missing table folder.
    let tableIDs = Set(tableWatches.values)
    for (watch, target) in targets {
      if case .ancestor = target, !ancestors.contains(watch), !tableIDs.contains(watch) {
        inotify.removeWatch(watch)
        targets[watch] = nil
      }
    }
    return added
  }

  /// Sorts inotify events into debounced saves, new folders and rescans.
  func handle(_ events: [Inotify.Event]) throws {
    let now = Clock.monotonicSeconds()
    var foldersChanged = false
    for event in events {
      if event.has(IN_Q_OVERFLOW) {
        rescanAt = now
        overflowed = true
        // Closes may be among the lost events: no file counts as open.
        writers.removeAll()
        continue
      }
      guard let target = targets[event.watch] else { continue }
      if event.has(IN_IGNORED) {
        targets[event.watch] = nil
        if case .table(let name) = target, tableWatches[name] == event.watch { tableWatches[name] = nil }
        foldersChanged = true
        continue
      }
      switch target {
      case .ancestor:
        if event.has(IN_ISDIR) { foldersChanged = true }
      case .table(let table):
        if event.has(IN_DELETE_SELF | IN_MOVE_SELF) {
          // The folder went with its documents: what is gone is found by a
          // rescan, and the folder is watched again if it comes back.
          foldersChanged = true
          rescanAt = now
          continue
        }
        if event.has(IN_ISDIR) || event.name.isEmpty { continue }
        // Every event on a file restarts its quiet period: IN_MODIFY means
        // a writer is still at it (an in-place save truncates first, and
        // the file is empty until it writes), IN_CREATE alone is how a
        // file linked into place shows up.
        guard event.has(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE),
          EditorFiles.documentPK(fileName: event.name) != nil
        else { continue }
        let key = FileKey(table: table, name: event.name)
        if event.has(IN_MODIFY) {
          writers[key] = now
        } else {
          // Closed, or the name now stands for another file (or none): a
          // writer of the old one no longer writes what the name holds.
          writers[key] = nil
        }
        debouncer.touch(key, now: now)
      }
    }
    if foldersChanged {
      for table in try installWatches() { try scheduleScan(of: table, now: now) }
    }
  }

  /// Queues every document file of a newly watched folder: files may have
  /// been made in it before the watch was added.
  private func scheduleScan(of tableName: String, now: Double) throws {
    guard let table = store.config.table(named: tableName) else { return }
    for name in try FileSystem.list(store.directory(of: table)) ?? []
    where EditorFiles.documentPK(fileName: name) != nil {
      debouncer.touch(FileKey(table: tableName, name: name), now: now)
    }
  }

  // MARK: Work

  /// Does whatever is due: a rescan, saves past their debounce, timers.
  func tick(now: Double) {
    if let deadline = rescanAt, deadline <= now {
      rescanAt = nil
      do {
        try catchUp()
        if overflowed { emit(.rescanned) }
        overflowed = false
      } catch {
        emit(.problem(error as? FolioError ?? FolioError(.io, "rescan failed: \(error)")))
        rescanAt = Clock.monotonicSeconds() + Self.retryDelay
      }
    }
    if debouncer.nextDeadline.map({ $0 <= now }) == true {
      // Events that arrived since poll returned may restart a quiet period.
      drainEvents()
      let now = Clock.monotonicSeconds()
      var due: [FileKey] = []
      for key in debouncer.takeDue(now: now) {
        // Quiet is not done: wait for the writer to close the file.
        if let lastWrite = writers[key], now < lastWrite + Self.writerPatience {
          debouncer.postpone(key, until: lastWrite + Self.writerPatience)
        } else {
          due.append(key)
        }
      }
      if !due.isEmpty { record(due) }
    }
    if let deadline = nextCommit, deadline <= now, let every = options.commitEvery {
      record(debouncer.takeAll())
      commit()
      nextCommit = Clock.monotonicSeconds() + every.seconds
    }
    if let deadline = nextSync, deadline <= now, let every = options.syncEvery {
      record(debouncer.takeAll())
      do {
        emit(.synced(try store.sync(remote: options.remote, push: options.push)))
      } catch let error as FolioError {
        emit(.problem(error))
      } catch {
        emit(.problem(FolioError(.remote, "sync failed: \(error)")))
      }
      nextSync = Clock.monotonicSeconds() + every.seconds
    }
  }

  /// Handles whatever events are queued, without waiting.
  private func drainEvents() {
    do {
      try handle(inotify.readEvents())
    } catch let error as FolioError {
      emit(.problem(error))
    } catch {
      emit(.problem(FolioError(.io, "reading file events failed: \(error)")))
    }
  }

  /// Records every save still waiting, and commits if a commit timer is set.
  func finish() {
    if rescanAt != nil {
      rescanAt = 0
      tick(now: Clock.monotonicSeconds())
    }
    record(debouncer.takeAll())
    if options.commitEvery != nil { commit() }
  }

  private func commit() {
    do {
      let summary = try store.commit()
      if summary.commit != nil { emit(.committed(summary)) }
    } catch let error as FolioError {
      emit(.problem(error))
    } catch {
      emit(.problem(FolioError(.git, "commit failed: \(error)")))
    }
  }

  /// What one file's save amounts to.
  private enum Outcome {
    /// Nothing to record; the bytes' hash, when they hold the known state.
    case unchanged(hash: UInt64?)
    /// A mutation to log; the bytes' hash, when a file remains.
    case mutation(Mutation, hash: UInt64?)
    case problem(FolioError, signature: String)
  }

  /// Reads each file, diffs it against what Folio last wrote or recorded,
  /// and logs the differences as ops in one transaction, all under the
  /// store lock so no write of Folio's interleaves.
  func record(_ keys: [FileKey]) {
    guard !keys.isEmpty else { return }
    let sorted = keys.sorted { ($0.table, $0.name) < ($1.table, $1.name) }
    var events: [WatchEvent] = []
    do {
      try store.lock.withLock {
        var problems: [(key: FileKey, path: String, error: FolioError, signature: String)] = []
        try store.recover()
        if known == nil { known = try KnownDocuments(store: store) }
        try known!.refresh()
        var evictions: [String: Set<ExactKey>]?
        var mutations: [(FileKey, TableConfig, String, Mutation, UInt64?)] = []
        for key in sorted {
          guard let table = store.config.table(named: key.table),
            let pk = EditorFiles.documentPK(fileName: key.name)
          else { continue }
          let path = table.path + "/" + key.name
          switch try examine(table: table, pk: pk, path: path, evictions: &evictions) {
          case .unchanged(let hash):
            reported[path] = nil
            if let hash { known!.settle(hash, table: table, pk: pk) }
          case .mutation(let mutation, let hash):
            reported[path] = nil
            mutations.append((key, table, pk, mutation, hash))
          case .problem(let error, let signature):
            problems.append((key, path, error, signature))
          }
        }
        // A file written to while it was read was caught half way: it is
        // read again once quiet, and only then is a problem reported. A
        // file a writer still holds open is not a save yet: its close
        // brings it back.
        drainEvents()
        for problem in problems {
          if debouncer.isPending(problem.key) || writers[problem.key] != nil {
            reported[problem.path] = nil
          } else if reported[problem.path] != problem.signature {
            reported[problem.path] = problem.signature
            events.append(.problem(problem.error))
          }
        }
        guard !mutations.isEmpty else { return }
        let ops = try store.writeLocked { transaction in
          for (_, table, pk, mutation, _) in mutations { transaction.log(mutation, table: table, pk: pk) }
          return transaction.ops
        }
        // The file now holds the known state: take in the ops just logged
        // (the lock is held, so they are the whole new tail), then remember
        // the bytes, so the same bytes seen again are dropped by hash.
        try known!.refresh()
        for (_, table, pk, _, hash) in mutations {
          if let hash { known!.settle(hash, table: table, pk: pk) }
        }
        for (op, entry) in zip(ops, mutations) {
          events.append(.recorded(op, file: entry.1.path + "/" + entry.0.name))
        }
      }
    } catch {
      // The store is locked for long, or a read failed: nothing was
      // recorded; try these files again shortly.
      let now = Clock.monotonicSeconds()
      for key in keys { debouncer.retry(key, after: Self.retryDelay, now: now) }
      events.append(
        .problem(error as? FolioError ?? FolioError(.io, "could not record saves: \(error)")))
    }
    for event in events { emit(event) }
  }

  private func examine(
    table: TableConfig, pk: String, path: String, evictions: inout [String: Set<ExactKey>]?
  ) throws -> Outcome {
    let absolute = store.rootPath + "/" + path
    guard let bytes = try FileSystem.read(absolute) else {
      // Evicting removes the local copy only: not a delete.
      if evictions == nil { evictions = try store.loadEvictions() }
      if evictions![table.name]?.contains(ExactKey(pk)) == true { return .unchanged(hash: nil) }
      guard try known!.document(table: table, pk: pk, path: path) != nil else { return .unchanged(hash: nil) }
      return .mutation(Mutation(kind: .remove), hash: nil)
    }
    // Folio's own writes (API mutations, sync checkouts, `fmt`) and files
    // already settled are told by their hash, without parsing them.
    let hash = FNV.hash(bytes)
    if try known!.holdsKnownState(bytes, hash: hash, table: table, pk: pk, path: path) {
      counters.countHashMatch()
      return .unchanged(hash: hash)
    }
    if known!.isImported(table: table, pk: pk) {
      // An uncommitted import's document: the file is the content (the
      // op carries no body to diff against), as `folio commit` takes it.
      counters.countImported()
      return .unchanged(hash: hash)
    }
    let current = try known!.document(table: table, pk: pk, path: path)
    if let current, known!.isCanonical(hash, of: current, table: table, pk: pk) {
      counters.countHashMatch()
      return .unchanged(hash: hash)
    }
    // No hash known for these bytes: parse and compare. A save that only
    // reformats (same value, other bytes) is no op, and its bytes are
    // remembered; one that also changes the value is recorded.
    counters.countParse()
    let document: JSONObject
    do {
      document = try store.parseEditedDocument(bytes, table: table, pk: pk, path: path)
    } catch let error as FolioError {
      return .problem(error, signature: FNV.hex(bytes) + "\n" + error.description)
    }
    if DocumentResolver.same(current, document) { return .unchanged(hash: hash) }
    // A save that breaks the table's schema is reported like invalid JSON,
    // and recorded once a later save is valid.
    if let problem = store.schemaProblems(document, bytes: bytes, table: table, path: path).first {
      return .problem(problem, signature: FNV.hex(bytes) + "\n" + problem.description)
    }
    let mutation = Mutation.diff(from: current, to: document, kinds: table.kind(of:))
    return mutation.isEmpty ? .unchanged(hash: hash) : .mutation(mutation, hash: hash)
  }

  /// Records every change made while nothing watched (or while events were
  /// lost): the scan `folio commit` does, logged as ops without a commit.
  func catchUp() throws {
    var events: [WatchEvent] = []
    try store.lock.withLock {
      try store.recover()
      let repository = try store.openRepository()
      let head = try repository.headCommit()
      let index = try repository.index()
      let scan = try store.scanPending(repository: repository, headTree: try head?.tree(), index: index)
      if !scan.refresh.isEmpty {
        // Files touched but unchanged (a checkout, `touch`): fresh stat data
        // in git's index spares the next start from reading them again.
        for entry in scan.refresh {
          try index.add(path: entry.path, id: entry.id, filePath: store.rootPath + "/" + entry.path)
        }
        try index.write()
      }
      var seen = Set<String>()
      // A file a writer holds open is reported, if need be, once closed.
      let open = Set(
        writers.keys.compactMap { key in store.config.table(named: key.table).map { $0.path + "/" + key.name }
        })
      // Edits made meanwhile that break the schema wait, reported, too.
      var synthetic: [PendingDocument] = []
      var problems = scan.problems
      for document in scan.documents where document.synthetic != nil {
        if let bytes = document.bytes, let object = document.document,
          let problem = store.schemaProblems(object, bytes: bytes, table: document.table, path: document.path)
            .first
        {
          problems.append(problem)
        } else {
          synthetic.append(document)
        }
      }
      for problem in problems {
        let path = problem.location?.file ?? problem.path ?? ""
        if open.contains(path) { continue }
        seen.insert(path)
        let bytes = (try? FileSystem.read(store.rootPath + "/" + path)) ?? nil
        let signature = FNV.hex(bytes ?? []) + "\n" + problem.description
        if reported[path] != signature {
          reported[path] = signature
          events.append(.problem(problem))
        }
      }
      for path in Array(reported.keys) where !seen.contains(path) { reported[path] = nil }
      guard !synthetic.isEmpty else { return }
      let ops = try store.writeLocked { transaction in
        for document in synthetic {
          // A new file gets its whole body in the op, not the compact
          // insert a commit logs (whose body is in the commit): until a
          // commit, the watcher diffs later saves against what ops say.
          var mutation = document.synthetic!
          if document.syntheticFromTree, let body = document.document {
            mutation = Mutation.diff(from: nil, to: body, kinds: document.table.kind(of:))
          }
          transaction.log(mutation, table: document.table, pk: document.pk)
        }
        return transaction.ops
      }
      for (op, document) in zip(ops, synthetic) { events.append(.recorded(op, file: document.path)) }
    }
    for event in events { emit(event) }
  }
}
