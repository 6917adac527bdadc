import FolioCore
import FolioSystem
import Glibc

/// The event handling of one running ``Watcher``: its event loop and
/// inotify watches, the saves waiting out their debounce, the files held
/// open by a writer, and the timers. What a due save amounts to is the
/// ``SaveRecorder``'s work. Used only on the thread that runs the watcher.
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
  /// Waits for file events and deadlines; ended by its handle.
  let loop: EventLoop
  /// The loop's inotify instance.
  let inotify: Inotify
  /// Turns due saves into ops.
  private let recorder: SaveRecorder
  private let emit: (WatchEvent) -> Void
  private var targets: [Int32: Target] = [:]
  private var tableWatches: [String: Int32] = [:]
  /// Each watched table's watches: its folder and, when hashed, its
  /// subfolders.
  private var sets: [String: FolderWatchSet] = [:]
  private var debouncer: Debouncer<FileKey>
  /// Files written to in place (`IN_MODIFY`) and not closed since
  /// (`IN_CLOSE_WRITE`), with the time of the last write: a writer still
  /// has them open, so what they hold may be half a save (an in-place save
  /// truncates first, and a writer descheduled under load leaves the file
  /// empty for as long as it likes).
  private var writers: [FileKey: Double] = [:]
  /// Files made by a writer that has not closed them yet (`IN_CREATE`
  /// without `IN_CLOSE_WRITE` since): while such a file is empty it is not
  /// a save but a file about to be written, however long the writer takes,
  /// so it is not read (nor reported as empty) until it holds something
  /// or is closed. A file linked into place also shows up as `IN_CREATE`
  /// alone, but whole, so it is read as usual.
  private var created: Set<FileKey> = []
  /// When to scan every table again, if a scan is wanted.
  private var rescanAt: Double?
  /// Whether that scan is for lost events, to be announced as
  /// ``WatchEvent/rescanned``.
  private var overflowed = false
  /// Set by events that may mean a table folder appeared or went.
  private var foldersChanged = false
  private var nextCommit: Double?
  private var nextSync: Double?
  /// The time, in monotonic seconds. Tests set it to drive the debounce
  /// and the writer's patience through `handle` and `tick(now:)` without
  /// waiting for them.
  var clock: () -> Double = SystemClock.monotonicSeconds

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

  /// - Parameter handle: ends ``run()``; nil for a new one.
  init(
    store: Store, options: Watcher.Options, counters: WatchCounters = WatchCounters(),
    handle: EventLoop.Handle? = nil, emit: @escaping (WatchEvent) -> Void
  ) throws {
    self.store = store
    self.options = options
    self.emit = emit
    recorder = SaveRecorder(store: store, counters: counters, emit: emit)
    loop = EventLoop(handle: try handle ?? EventLoop.Handle())
    inotify = try loop.inotifyInstance()
    debouncer = Debouncer(delay: options.debounce.seconds)
    loop.onOverflow { [unowned self] in noteOverflow() }
  }

  /// Puts the watches in place, records what changed while nothing watched,
  /// and starts the timers. Watching comes first, so a save made during the
  /// catch-up is seen by one or the other.
  func start() throws {
    _ = try installWatches()
    try catchUp()
    let now = clock()
    nextCommit = options.commitEvery.map { now + $0.seconds }
    nextSync = options.syncEvery.map { now + $0.seconds }
    emit(.ready(tables: store.heldTables.map(\.name)))
  }

  /// Handles events and deadlines until the loop's handle is stopped.
  /// - Throws: when the event queue cannot be read or watches cannot be
  ///   added.
  func run() throws {
    loop.deadline = { [unowned self] in nextDeadline }
    loop.afterWake = { [unowned self] in
      try settleFolders()
      tick(now: clock())
    }
    try loop.run()
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
    // A partial replica's absent tables are not recorded: their documents
    // are not here, and a file saved in their folder is not one of them.
    for table in store.heldTables {
      let directory = store.directory(of: table)
      if let watch = try watchTable(table, directory: directory) {
        if tableWatches[table.name] != watch { added.append(table.name) }
        tableWatches[table.name] = watch
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
        if let watch = try loop.watch(
          ancestor, mask: Self.ancestorMask, handler: { [unowned self] in note($0) })
        {
          ancestors.insert(watch)
          if case .table? = targets[watch] {} else { targets[watch] = .ancestor }
        }
        // A folder made below the ancestor before its watch was in place
        // sent it no event: go one level deeper instead.
        guard FileSystem.isDirectory(next) else { break }
        if next == directory, let watch = try watchTable(table, directory: directory) {
          added.append(table.name)
          tableWatches[table.name] = watch
          break
        }
      }
    }
    // Ancestors that no longer lead to a missing table folder.
    let tableIDs = Set(tableWatches.values)
    for (watch, target) in targets {
      if case .ancestor = target, !ancestors.contains(watch), !tableIDs.contains(watch) {
        loop.unwatch(watch)
        targets[watch] = nil
      }
    }
    return added
  }

  /// Watches the folder of `table` (and its subfolders when hashed).
  /// - Returns: the folder's watch id; nil when it does not exist.
  private func watchTable(_ table: TableConfig, directory: String) throws -> Int32? {
    var set = table.watchSet(folder: directory)
    var failure: Error?
    let started = set.start(
      add: { path in
        do {
          return try addTableWatch(path)
        } catch {
          failure = error
          return nil
        }
      }, remove: loop.unwatch)
    if let failure { throw failure }
    guard started, let top = set.top else { return nil }
    for watch in set.watches { targets[watch] = .table(table.name) }
    sets[table.name] = set
    return top
  }

  /// Adds a watch on a folder of document files; nil when it does not
  /// exist.
  private func addTableWatch(_ path: String) throws -> Int32? {
    try loop.watch(path, mask: Self.tableMask) { [unowned self] in note($0) }
  }

  /// Sorts a batch of inotify events, as the loop delivers them, into
  /// debounced saves, new folders and rescans.
  func handle(_ events: [Inotify.Event]) throws {
    loop.deliver(events)
    try settleFolders()
  }

  /// Events were lost: everything is scanned again.
  private func noteOverflow() {
    rescanAt = clock()
    overflowed = true
    // Closes may be among the lost events: no file counts as open.
    writers.removeAll()
  }

  /// Takes one event on a watched folder.
  private func note(_ event: Inotify.Event) {
    let now = clock()
    guard let target = targets[event.watch] else { return }
    if event.has(IN_IGNORED) {
      targets[event.watch] = nil
      if case .table(let name) = target, tableWatches[name] == event.watch { tableWatches[name] = nil }
      foldersChanged = true
      return
    }
    switch target {
    case .ancestor:
      if event.has(IN_ISDIR) { foldersChanged = true }
    case .table(let table):
      guard var set = sets[table], let config = store.config.table(named: table) else { return }
      let found = set.interpret(event, add: { try? addTableWatch($0) }, remove: loop.unwatch)
      for watch in set.watches { targets[watch] = .table(table) }
      sets[table] = set
      if found.contains(.lost) {
        // The folder went with its documents (or a subfolder with its
        // own): what is gone is found by a rescan, and the folder is
        // watched again if it comes back.
        foldersChanged = true
        rescanAt = now
        return
      }
      if event.has(IN_ISDIR) {
        // A subfolder made: the files already in it.
        guard config.layout != .flat else { return }
        for case .file(let name) in found where EditorFiles.documentPK(table: config, name: name) != nil {
          debouncer.touch(FileKey(table: table, name: name), now: now)
        }
        return
      }
      // Every event on a file restarts its quiet period: IN_MODIFY means
      // a writer is still at it (an in-place save truncates first, and
      // the file is empty until it writes), IN_CREATE alone is how a
      // file linked into place shows up.
      guard event.has(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE),
        case .file(let name)? = found.first, EditorFiles.documentPK(table: config, name: name) != nil
      else { return }
      let key = FileKey(table: table, name: name)
      if event.has(IN_CREATE) && !event.has(IN_CLOSE_WRITE) {
        created.insert(key)
      } else if event.has(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE) {
        created.remove(key)
      }
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

  /// Watches the folders that appeared, and queues what they hold.
  private func settleFolders() throws {
    guard foldersChanged else { return }
    foldersChanged = false
    let now = clock()
    for table in try installWatches() { try scheduleScan(of: table, now: now) }
  }

  /// Queues every document file of a newly watched folder: files may have
  /// been made in it before the watch was added.
  private func scheduleScan(of tableName: String, now: Double) throws {
    guard let table = store.config.table(named: tableName) else { return }
    for name in try table.listDocumentNames(in: store.directory(of: table)) ?? []
    where EditorFiles.documentPK(table: table, name: name) != nil {
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
        rescanAt = clock() + Self.retryDelay
      }
    }
    if debouncer.nextDeadline.map({ $0 <= now }) == true {
      // Events that arrived since poll returned may restart a quiet period.
      drainEvents()
      let now = clock()
      var due: [FileKey] = []
      for key in debouncer.takeDue(now: now) {
        // Quiet is not done: wait for the writer to close the file.
        if let lastWrite = writers[key], now < lastWrite + Self.writerPatience {
          debouncer.postpone(key, until: lastWrite + Self.writerPatience)
        } else if created.contains(key), isEmptyFile(key) {
          // Made and not yet written: its next write or its close brings
          // it back.
          continue
        } else {
          due.append(key)
        }
      }
      if !due.isEmpty { record(due) }
    }
    if let deadline = nextCommit, deadline <= now, let every = options.commitEvery {
      record(debouncer.takeAll())
      commit()
      nextCommit = clock() + every.seconds
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
      nextSync = clock() + every.seconds
    }
  }

  /// Whether the file `key` names exists and holds nothing.
  private func isEmptyFile(_ key: FileKey) -> Bool {
    guard let table = store.config.table(named: key.table) else { return false }
    var st = stat()
    let path = store.directory(of: table) + "/" + key.name
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0
  }

  /// Handles whatever events are queued, without waiting.
  private func drainEvents() {
    do {
      try loop.drain()
      try settleFolders()
    } catch let error as FolioError {
      emit(.problem(error))
    } catch {
      emit(.problem(FolioError(.io, "reading file events failed: \(error)")))
    }
  }

  /// Records every save still waiting, and commits if a commit timer is set.
  func finish() {
    // A save made just before the stop may still sit in the kernel's queue
    // (the stop and its event can wake the same poll): read it now, or it
    // would be recorded only by the next start's catch-up.
    drainEvents()
    if rescanAt != nil {
      rescanAt = 0
      tick(now: clock())
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

  /// Records the saves of `keys`; if nothing could be recorded, tries them
  /// again shortly.
  func record(_ keys: [FileKey]) {
    let session = SaveRecorder.Session(
      drain: { [unowned self] in drainEvents() },
      isSettling: { [unowned self] key in debouncer.isPending(key) || writers[key] != nil })
    if !recorder.record(keys, session: session) {
      let now = clock()
      for key in keys { debouncer.retry(key, after: Self.retryDelay, now: now) }
    }
  }

  /// Records every change made while nothing watched (or while events were
  /// lost); a file a writer holds open is left to its close.
  func catchUp() throws {
    try recorder.catchUp(skipping: Set(writers.keys))
  }
}
