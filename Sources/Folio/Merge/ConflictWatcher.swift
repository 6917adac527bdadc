import Foundation
import Glibc

/// The thread behind a ``ConflictObservation``: inotify on the two folders
/// whose files decide the list, `.folio/conflicts/` (records arrive with
/// merges, `folio sync` and `git pull` alike) and `.folio/ops/` (an op
/// settles a record, whichever process or replica wrote it), waited on
/// with `poll` and a wake pipe, never on a timer.
///
/// A burst of events (git writing a merge's files one by one, a checkout)
/// is taken as one change: the list is read again once the folders have
/// been quiet for ``settle`` seconds, and not while a sync's checkout is
/// under way (its ``TransactionMarker``). The handler hears of it only if
/// the list changed.
final class ConflictWatcher: Sendable {
  private let inotify: Inotify
  private let wakeRead: Int32
  private let wakeWrite: Int32
  /// How long the folders must be quiet before the list is read again.
  static let settle = 0.03

  private static let folderMask = UInt32(
    IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF
      | IN_MOVE_SELF)

  /// Starts watching; `refresh` reads the list and hands it on, on the
  /// watcher's thread.
  init(store: Store, refresh: @escaping @Sendable () -> Void) throws {
    inotify = try Inotify()
    var fds: [Int32] = [0, 0]
    try FileSystem.syscall("pipe", path: "") { pipe(&fds) }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    wakeRead = fds[0]
    wakeWrite = fds[1]
    var watches = Watches(store: store)
    try watches.update(inotify)
    let (inotify, wakeRead) = (inotify, wakeRead)
    let thread = Thread { [watches] in
      var watches = watches
      ConflictWatcher.loop(
        inotify: inotify, wake: wakeRead, watches: &watches, store: store, refresh: refresh)
      close(wakeRead)
    }
    thread.name = "folio.conflicts"
    thread.start()
  }

  /// Ends the thread; it closes its own end once it has stopped reading.
  func stop() { close(wakeWrite) }

  /// The watch ids: the folders, and the ones above that may not exist yet.
  struct Watches: Sendable {
    let store: Store
    var conflicts: Int32?
    var ops: Int32?
    /// `.folio/` and the root, to learn when the folders are made.
    var parents: Set<Int32> = []
    /// `.git/folio/`, where a checkout's marker comes and goes.
    var marker: Int32?

    init(store: Store) { self.store = store }

    /// Adds the watches still missing (a folder made since).
    mutating func update(_ inotify: Inotify) throws {
      let root = store.rootPath
      let created = UInt32(IN_CREATE | IN_MOVED_TO)
      if let watch = try inotify.addWatch(root, mask: created) { parents.insert(watch) }
      if let watch = try inotify.addWatch(root + "/.folio", mask: created) { parents.insert(watch) }
      if conflicts == nil {
        conflicts = try inotify.addWatch(root + "/" + Conflict.folder, mask: ConflictWatcher.folderMask)
      }
      if ops == nil {
        ops = try inotify.addWatch(root + "/" + Store.opsFolder, mask: ConflictWatcher.folderMask)
      }
      if marker == nil { marker = try inotify.addWatch(store.privateDirectory, mask: UInt32(IN_DELETE)) }
    }

    /// Whether `event` can change the list (or ends a wait).
    mutating func matters(_ event: Inotify.Event) -> Bool {
      if event.has(IN_Q_OVERFLOW) { return true }
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

  private static func loop(
    inotify: Inotify, wake: Int32, watches: inout Watches, store: Store, refresh: @Sendable () -> Void
  ) {
    var pending = false
    var lastEvent = 0.0
    while true {
      var fds = [
        pollfd(fd: inotify.descriptor, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
      ]
      let timeout: Int32 = pending ? Int32(settle * 1000) : -1
      let n = poll(&fds, 2, timeout)
      if n < 0 && errno != EINTR { return }
      if fds[1].revents != 0 { return }
      if fds[0].revents != 0 {
        let events = (try? inotify.readEvents()) ?? []
        if events.contains(where: { watches.matters($0) }) {
          pending = true
          lastEvent = Clock.monotonicSeconds()
          try? watches.update(inotify)
        }
      }
      guard pending, Clock.monotonicSeconds() - lastEvent >= settle else { continue }
      // A checkout writes many files outside the journal: wait until it is
      // done (its marker's removal wakes us), so it arrives as one change.
      if TransactionMarker.isPresent(privateDirectory: store.privateDirectory) { continue }
      pending = false
      refresh()
    }
  }
}
