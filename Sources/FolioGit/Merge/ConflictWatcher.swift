import FolioCore
import FolioSystem
import Glibc

/// The thread behind a ``ConflictObservation``: inotify on the two folders
/// whose files decide the list, `.folio/conflicts/` (records arrive with
/// merges, `folio sync` and `git pull` alike) and `.folio/ops/` (an op
/// settles a record, whichever process or replica wrote it), on an
/// ``EventLoop`` of its own, never on a timer.
///
/// A burst of events (git writing a merge's files one by one, a checkout)
/// is taken as one change: the list is read again once the folders have
/// been quiet for ``settle`` seconds, and not while a sync's checkout is
/// under way (its ``TransactionMarker``). The handler hears of it only if
/// the list changed.
final class ConflictWatcher: Sendable {
  private let handle: EventLoop.Handle
  /// How long the folders must be quiet before the list is read again.
  static let settle = 0.03

  private static let folderMask = UInt32(
    IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF
      | IN_MOVE_SELF)

  /// Starts watching; `refresh` reads the list and hands it on, on the
  /// watcher's thread.
  init(store: Store, refresh: @escaping @Sendable () -> Void) throws {
    handle = try EventLoop.startThread(named: "folio.conflicts") { loop, started in
      var watches = Watches(store: store)
      // Seconds on the monotonic clock of the last event that mattered;
      // nil when nothing is pending.
      var lastEvent: Double?
      var note: (Inotify.Event) -> Void = { _ in }
      let add = { (path: String, mask: UInt32) throws -> Int32? in
        try loop.watch(path, mask: mask) { note($0) }
      }
      note = { event in
        guard watches.matters(event) else { return }
        lastEvent = SystemClock.monotonicSeconds()
        try? watches.update(add)
      }
      try watches.update(add)
      loop.onOverflow { lastEvent = SystemClock.monotonicSeconds() }
      loop.deadline = { lastEvent.map { $0 + ConflictWatcher.settle } }
      loop.afterWake = {
        guard let last = lastEvent, SystemClock.monotonicSeconds() - last >= ConflictWatcher.settle else {
          return
        }
        // A checkout writes many files outside the journal: wait until it
        // is done (its marker's removal wakes us, or the next settle
        // period), so it arrives as one change.
        if TransactionMarker.isPresent(privateDirectory: store.privateDirectory) {
          lastEvent = SystemClock.monotonicSeconds()
          return
        }
        lastEvent = nil
        refresh()
      }
      started()
      try loop.run()
    }
  }

  /// Ends the thread.
  func stop() { handle.stop() }

  /// The watch ids: the folders, and the ones above that may not exist yet.
  struct Watches {
    let store: Store
    var conflicts: Int32?
    var ops: Int32?
    /// `.folio/` and the root, to learn when the folders are made.
    var parents: Set<Int32> = []
    /// `.git/folio/`, where a checkout's marker comes and goes.
    var marker: Int32?

    init(store: Store) { self.store = store }

    /// Adds the watches still missing (a folder made since) through `add`,
    /// which returns nil for a path that does not exist.
    mutating func update(_ add: (String, UInt32) throws -> Int32?) throws {
      let root = store.rootPath
      let created = UInt32(IN_CREATE | IN_MOVED_TO)
      if let watch = try add(root, created) { parents.insert(watch) }
      if let watch = try add(root + "/.folio", created) { parents.insert(watch) }
      if conflicts == nil { conflicts = try add(root + "/" + Conflict.folder, ConflictWatcher.folderMask) }
      if ops == nil { ops = try add(root + "/" + Store.opsFolder, ConflictWatcher.folderMask) }
      if marker == nil { marker = try add(store.privateDirectory, UInt32(IN_DELETE)) }
    }

    /// Whether `event` can change the list (or ends a wait).
    mutating func matters(_ event: Inotify.Event) -> Bool {
      if event.watch == conflicts || event.watch == ops {
        if event.has(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) {
          if event.watch == conflicts { conflicts = nil } else { ops = nil }
        }
        return true
      }
      if parents.contains(event.watch) {
        return event.name == ".folio" || event.name == "conflicts" || event.name == "ops"
      }
      return event.watch == marker && event.name == TransactionMarker.name
    }
  }
}
