import FolioCore
import FolioJSON
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// The thread that sees changes made outside this process: inotify on every
/// table folder and on `.folio/ops/`, waited on with `poll`, never polled
/// on a timer.
///
/// Document files are replaced by rename (`IN_MOVED_TO`), written in place
/// by editors and git (`IN_CLOSE_WRITE`) or removed (`IN_DELETE`,
/// `IN_MOVED_FROM`); each event names the file, so only observers of that
/// document (or of a query over its table) do work. The op logs tell of a
/// transaction in a table whose folder did not exist yet. While the
/// journal (`.git/folio/journal`, also watched) is full and not stamped
/// applied (`.git/folio/applied`, see ``Journal/stampApplied(_:journal:)``)
/// a Folio transaction is under way; the thread holds back changes to the
/// documents it writes until it is stamped, so it sees another process's
/// transaction whole. An import or a sync checkout, which write outside the
/// journal, leave a ``TransactionMarker`` while they write; every change is
/// held back while it is there, so they too are seen whole. A writer that
/// is not Folio (git, an editor) may be seen in more than one step.
final class ObservationWatcher: Sendable {
  /// Ends the watcher's thread.
  private let loop: EventLoop.Handle

  private static let folderMask =
    UInt32(
      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
  private static let opsMask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)

  init(store: Store, center: ObservationCenter) throws {
    loop = try EventLoop.startThread(named: "folio.observation") { loop, started in
      let refresher = Refresher(store: store, center: center, loop: loop)
      try refresher.installWatches()
      started()
      loop.deadline = { [unowned refresher] in refresher.deadline }
      loop.afterWake = { [unowned refresher] in refresher.step() }
      try loop.run()
    }
  }

  /// Ends the thread, without waiting for it.
  func stop() { loop.stop() }

  /// The watch ids and what they stand for.
  struct Watches {
    let store: Store
    var tables: [Int32: String] = [:]
    /// Each watched table's watches: its folder and, when hashed, its
    /// subfolders.
    var sets: [String: FolderWatchSet] = [:]
    var ops: Int32?
    /// `.git/folio/`, where the journal empties at the end of a transaction.
    var journal: Int32?
    /// Watches on the nearest existing folder above a table folder that does
    /// not exist yet, to learn when it is made.
    var ancestors: Set<Int32> = []

    init(store: Store) { self.store = store }

    /// Adds the watches that are missing (a folder made since), each
    /// handing its events to `handler`.
    /// - Returns: the tables that have just gained a watch.
    @discardableResult
    mutating func update(_ loop: EventLoop, handler: @escaping (Inotify.Event) -> Void) throws -> [String] {
      if ops == nil {
        ops = try loop.watch(
          store.rootPath + "/" + Store.opsFolder, mask: ObservationWatcher.opsMask, handler: handler)
      }
      if journal == nil {
        // IN_DELETE: the transaction marker's removal ends a wait.
        journal = try loop.watch(
          store.privateDirectory, mask: UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE),
          handler: handler)
      }
      var added: [String] = []
      let watched = Set(tables.values)
      for table in store.config.tables where !watched.contains(table.name) {
        let folder = store.directory(of: table)
        // Each pass either watches the folder or an ancestor deeper than
        // the last, or stops: it ends within the path's depth.
        var deepest = 0
        while true {
          var set = table.watchSet(folder: folder)
          var failure: Error?
          let started = set.start(
            add: { path in
              do {
                return try loop.watch(path, mask: ObservationWatcher.folderMask, handler: handler)
              } catch {
                failure = error
                return nil
              }
            }, remove: loop.unwatch)
          if let failure { throw failure }
          if started {
            for watch in set.watches { tables[watch] = table.name }
            sets[table.name] = set
            added.append(table.name)
            break
          }
          var parent = FileSystem.split(folder).directory
          var watchedParent: String?
          while parent.count > 1 {
            if let watch = try loop.watch(
              parent, mask: UInt32(IN_CREATE | IN_MOVED_TO | IN_MASK_ADD), handler: handler)
            {
              ancestors.insert(watch)
              watchedParent = parent
              break
            }
            parent = FileSystem.split(parent).directory
          }
          // A folder made below the ancestor before its watch was in place
          // sends no event: look once more, a level deeper.
          guard let watchedParent, watchedParent.count < folder.count, watchedParent.count > deepest else {
            break
          }
          deepest = watchedParent.count
          let rest = folder.dropFirst(watchedParent.count + 1)
          let child = watchedParent + "/" + (rest.split(separator: "/").first.map(String.init) ?? "")
          if !FileSystem.isDirectory(child) { break }
        }
      }
      return added
    }

    /// The documents at `paths`, by table; a path in no table folder (an
    /// older name, say) stands for the whole of every table, to be safe.
    func keys(of paths: [String]) -> [String: Set<ExactKey>?] {
      var keys: [String: Set<ExactKey>?] = [:]
      for path in paths {
        guard let (config, pk) = store.config.document(atPath: store.relative(path)) else {
          for table in store.config.tables { keys[table.name] = .some(nil) }
          continue
        }
        ObservationWatcher.merge([ExactKey(pk)], into: &keys, table: config.name)
      }
      return keys
    }
  }

  /// The transaction under way, as last decoded from the journal: its
  /// checksum line, and the documents it writes.
  struct KnownTransaction {
    var trailer: [UInt8]
    var keys: [String: Set<ExactKey>?]
  }

  /// The watcher thread's state: what changed since the last refresh, and
  /// the waits for transactions under way. Lives on the loop's thread.
  private final class Refresher {
    let store: Store
    let center: ObservationCenter
    let loop: EventLoop
    var watches: Watches
    var changes: [String: Set<ExactKey>?] = [:]
    var sawOps = false
    /// What the events handled since the last ``collect()`` saw.
    var drained = Drained()
    var waitingSince: Double?
    /// Set when changes are left over from a refresh: look again at once.
    var again = false
    /// Refreshes in a row that a transaction overlapped.
    var conflicts = 0
    /// The documents of the transaction under way, by its checksum line.
    var known: KnownTransaction?

    init(store: Store, center: ObservationCenter, loop: EventLoop) {
      self.store = store
      self.center = center
      self.loop = loop
      watches = Watches(store: store)
    }

    /// When to look again without an event: at once after a refresh that
    /// left changes; every 100 ms while waiting out a journal a crash may
    /// have left behind; else never.
    var deadline: Double? {
      if again { return SystemClock.monotonicSeconds() }
      return waitingSince == nil ? nil : SystemClock.monotonicSeconds() + 0.1
    }

    /// Adds the watches that are missing.
    /// - Returns: the tables that have just gained a watch.
    @discardableResult
    func installWatches() throws -> [String] {
      loop.onOverflow { [unowned self] in noteOverflow() }
      return try watches.update(loop) { [unowned self] event in note(event) }
    }

    /// Drains the queued events into `changes`, and says what they were.
    @discardableResult
    func collect() -> Drained {
      drained = Drained()
      try? loop.drain()
      return drained
    }

    func noteOverflow() {
      for table in store.config.tables { changes[table.name] = .some(nil) }
      drained.overflowed = true
    }

    /// Takes one event into `changes` and `drained`.
    func note(_ event: Inotify.Event) {
      if event.watch == watches.journal {
        // Emptying the journal (`truncate`) does not close it; writing a
        // new one does, before the transaction touches any document.
        if event.name == "journal" && event.has(IN_CLOSE_WRITE) { drained.segments.append([:]) }
        // An import or checkout began (and may have ended) since the last
        // drain: reads made meanwhile may hold part of it.
        if event.name == TransactionMarker.name && event.has(IN_CREATE) { drained.overflowed = true }
        return  // also a wake-up: the loop checks the journal
      }
      if event.watch == watches.ops || watches.ancestors.contains(event.watch) {
        // A transaction, or a folder made: add the watches now possible.
        sawOps = true
        return
      }
      guard let table = watches.tables[event.watch], var set = watches.sets[table] else { return }
      let found = set.interpret(
        event,
        add: { [unowned self] path in
          try? loop.watch(path, mask: ObservationWatcher.folderMask) { [unowned self] in note($0) }
        }, remove: loop.unwatch)
      if found.contains(.lost) {
        // The folder is gone (a checkout removed it), or files left it
        // unseen: watch it again when it is back, and recheck everything
        // in it.
        set.stop(remove: loop.unwatch)
        for (watch, owner) in watches.tables where owner == table { watches.tables[watch] = nil }
        watches.sets[table] = nil
        changes[table] = .some(nil)
        drained.segments[drained.segments.count - 1][table] = .some(nil)
        return
      }
      for watch in set.watches { watches.tables[watch] = table }
      watches.sets[table] = set
      guard let config = store.config.table(named: table) else { return }
      for case .file(let name) in found {
        guard let pk = config.pk(fromDocumentName: name) else { continue }
        ObservationWatcher.merge([ExactKey(pk)], into: &changes, table: table)
        ObservationWatcher.merge(
          [ExactKey(pk)], into: &drained.segments[drained.segments.count - 1], table: table)
      }
    }

    /// Waits for a writer midway: nothing, until a second has passed
    /// since the wait began; then the store lock, which the writer holds
    /// until it is done, and under it the recovery of what a killed writer
    /// left and `cleanUp`; then the step runs again.
    func waitForWriter(_ cleanUp: () -> Void = {}) {
      let now = SystemClock.monotonicSeconds()
      let since = waitingSince ?? now
      waitingSince = since
      if now - since < 1 { return }
      _ = try? store.lock.withLock {
        try store.recover()
        cleanUp()
      }
      waitingSince = nil
      again = true
    }

    /// What follows each wake-up: waits out transactions under way, then
    /// refreshes the observers of what changed.
    func step() {
      again = false
      // What the wake-up's own events saw is in `changes`; only drains
      // during a refresh are weighed against its reads.
      drained = Drained()
      if changes.isEmpty && !sawOps { return }
      // An import or a checkout under way (TransactionMarker): nothing is
      // read until it is done, so it arrives as one event. After a second
      // the wait goes on under the store lock, which the writer holds until
      // it is done; a mark still there then is one a killed writer left.
      if TransactionMarker.isPresent(privateDirectory: store.privateDirectory) {
        return waitForWriter { TransactionMarker.remove(privateDirectory: store.privateDirectory) }
      }
      // A Folio transaction under way (here or in another process) is seen
      // whole: once it stamps itself applied (or, from an older writer or a
      // recovery, empties the journal), which wakes us. The stamp comes as
      // soon as its documents are in place, before the slow journal truncate,
      // and names the transaction: a busy writer's next journal does not hide
      // it. Until then only changes to documents it does not write are read.
      // The watcher does not take the store lock: a busy writer would starve
      // it. A journal a writer killed midway left is finished after a second,
      // under the lock, as the next open would: its half is never delivered.
      var underWay: [String: Set<ExactKey>?] = [:]
      if let trailer = Journal.unstampedTrailer(at: store.journalPath),
        let keys = known?.trailer == trailer
          ? known?.keys
          : Journal.writes(at: store.journalPath, root: store.rootPath).map({ watches.keys(of: $0) })
      {
        // Decoded once per transaction: a large one wakes us many times.
        known = KnownTransaction(trailer: trailer, keys: keys)
        underWay = keys
        // Only the op log, or a folder, changed: that is the transaction's.
        if changes.isEmpty || changes.contains(where: { Drained.overlap(underWay[$0.key], $0.value) }) {
          return waitForWriter()
        }
      }
      waitingSince = nil
      center.afterJournalCheck.withLock { $0 }?()
      for table in (try? installWatches()) ?? [] { changes[table] = .some(nil) }
      var batch: [String: Set<ExactKey>?] = [:]
      swap(&batch, &changes)
      sawOps = false
      // A transaction that began after the journal check may be half done
      // in what the refresh reads. What it wrote is queued by the time the
      // reads are done: if that touches what was read, the refresh delivers
      // nothing, and is done again (with what the transaction changed) once
      // it has ended. A busy writer can make that happen again and again;
      // after a few times the refresh runs under the store lock instead.
      var whole = false
      if conflicts >= 3 {
        // Under the lock no writer is midway, but one that died may have
        // left a journal: finish it first, so its half is not read.
        whole =
          (try? store.lock.withLock {
            try store.recover()
            return center.refresh(store: store, changes: batch)
          }) ?? false
      }
      if !whole {
        whole = center.refresh(store: store, changes: batch) { read in
          center.afterReads.withLock { $0 }?()
          return !collect().touches(read, underWay: underWay)
            // An import or checkout began during the reads.
            && !TransactionMarker.isPresent(privateDirectory: store.privateDirectory)
        }
      }
      if whole {
        conflicts = 0
      } else {
        conflicts += 1
        for (table, pks) in batch { ObservationWatcher.merge(pks, into: &changes, table: table) }
      }
      again = !changes.isEmpty || sawOps
    }
  }

  /// What one drain of the event queue saw, in order: the documents changed
  /// before the first Folio transaction that began in it (its journal was
  /// written), then those of each such transaction.
  struct Drained {
    /// Table to pks; nil pks: anything in the table.
    var segments: [[String: Set<ExactKey>?]] = [[:]]
    var overflowed = false

    /// Whether a transaction seen here may show in part in reads of `read`
    /// made since the previous drain, and the journal then was empty or
    /// held `underWay`'s transaction (the documents it writes).
    ///
    /// A transaction that began after the journal check matters only if it
    /// wrote a document that was read (before or after it did: either way
    /// the reads may hold part of it). What came before the first new
    /// transaction is the end of one that finished between that drain and
    /// the journal check: the reads may hold its other documents, so any of
    /// it counts, except the writes of `underWay`, which count if they were
    /// read (it writes nothing else).
    func touches(_ read: [String: Set<ExactKey>?], underWay: [String: Set<ExactKey>?] = [:]) -> Bool {
      if overflowed { return true }
      if read.contains(where: { Drained.overlap(underWay[$0.key], $0.value) }) { return true }
      for (table, written) in segments[0] {
        guard let written else { return true }
        guard case .some(.some(let pending)) = underWay[table] else {
          if !written.isEmpty { return true }
          continue
        }
        if !written.isSubset(of: pending) { return true }
      }
      for segment in segments.dropFirst() {
        for (table, written) in segment {
          guard let seen = read[table] else { continue }
          guard let written, let seen else { return true }
          if !written.isDisjoint(with: seen) { return true }
        }
      }
      return false
    }

    /// Whether `a` and `b` (pks of one table; nil for all of it) may share a
    /// document; false if either is missing.
    static func overlap(_ a: Set<ExactKey>??, _ b: Set<ExactKey>?) -> Bool {
      guard case .some(let a) = a else { return false }
      guard let a, let b else { return true }
      return !a.isDisjoint(with: b)
    }
  }

  static func merge(
    _ pks: Set<ExactKey>?, into changes: inout [String: Set<ExactKey>?], table: String
  ) {
    guard let pks else {
      changes[table] = .some(nil)
      return
    }
    if case .some(.some) = changes[table] {
      changes[table]!!.formUnion(pks)
    } else if changes[table] == nil {
      changes[table] = .some(pks)
    }
  }
}
