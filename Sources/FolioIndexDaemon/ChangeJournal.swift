import FolioCore
import FolioQuery
import FolioSystem
import Glibc

/// The names of document files changed in a store's table folders, in the
/// order a publisher saw them, so that `folio status` and `folio commit`
/// look only at those (``ChangedFiles``), as git's fsmonitor daemon lets
/// `git status` look only at what changed.
///
/// A token is the journal's epoch (random, one per publisher) and a
/// sequence number. A question with a token of this epoch is answered,
/// for each table whose folder has been watched without a gap since that
/// token, with every name seen since; a table whose watch was lost, whose
/// folder did not exist, or whose history was dropped (the kernel's queue
/// overflowed, or more names than ``maximumNames`` piled up) is left out,
/// and the asker checks it whole.
///
/// Used only on the publisher's thread.
final class ChangeJournal {
  /// Names kept before the history is dropped: a bound on memory that an
  /// import of millions of files cannot push past.
  static let maximumNames = 200_000

  let epoch: String
  private var sequence: UInt64 = 1
  private let inotify: Inotify
  private let store: Store
  /// Each table's folder watches.
  private var watches: [String: FolderWatchSet] = [:]
  /// The table of each watch id.
  private var tables: [Int32: String] = [:]
  /// For each table, the sequence from which its history is whole.
  private var wholeSince: [String: UInt64] = [:]
  /// For each table, each name's last change.
  private var names: [String: [String: UInt64]] = [:]
  private var count = 0

  /// The descriptor to poll; ``drain()`` when it is readable.
  var descriptor: Int32 { inotify.descriptor }

  init(store: Store) throws {
    self.store = store
    inotify = try Inotify()
    epoch = String(UInt64.random(in: 1...UInt64.max), radix: 16)
    watchMissingTables()
  }

  /// Adds a watch on `folder` if it is on a local file system: network
  /// and user-space file systems may change without an event.
  private func addWatch(_ folder: String) -> Int32? {
    let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard dirfd >= 0 else { return nil }
    defer { close(dirfd) }
    guard let type = FileSystem.fileSystemType(dirfd), IndexWatcher.localFileSystems.contains(type) else {
      return nil
    }
    return try? inotify.addWatch(FileSystem.descriptorPath(dirfd), mask: IndexWatcher.mask)
  }

  /// Watches every table folder that has no watch yet (one created since):
  /// its history starts now.
  private func watchMissingTables() {
    for table in store.config.tables where watches[table.name] == nil {
      var set = table.watchSet(folder: store.directory(of: table))
      guard set.start(add: addWatch, remove: inotify.removeWatch) else { continue }
      for watch in set.watches { tables[watch] = table.name }
      watches[table.name] = set
      // Past every token handed out so far: none of them saw this watch.
      sequence += 1
      wholeSince[table.name] = sequence
      names[table.name] = [:]
    }
  }

  /// Reads every queued event into the history.
  func drain() {
    guard let events = try? inotify.readEvents() else { return forgetAll() }
    for event in events {
      if event.has(IN_Q_OVERFLOW) {
        forgetAll()
        continue
      }
      guard let table = tables[event.watch], var set = watches[table] else { continue }
      let changes = set.interpret(event, add: addWatch, remove: inotify.removeWatch)
      if changes.contains(.lost) {
        // The folder went away or moved, or files left unseen: a new watch
        // and history at the next question.
        set.stop(remove: inotify.removeWatch)
        for (watch, owner) in tables where owner == table { tables[watch] = nil }
        watches[table] = nil
        wholeSince[table] = nil
        count -= names.removeValue(forKey: table)?.count ?? 0
        continue
      }
      for watch in set.watches { tables[watch] = table }
      watches[table] = set
      for case .file(let name) in changes {
        sequence += 1
        if names[table]?.updateValue(sequence, forKey: name) == nil { count += 1 }
      }
    }
    if count > Self.maximumNames { forgetAll() }
  }

  /// Drops every table's history: older tokens get no answer for them.
  private func forgetAll() {
    sequence += 1
    for table in names.keys {
      names[table] = [:]
      wholeSince[table] = sequence
    }
    count = 0
  }

  /// The answer to a question with `token`: drains first, so every change
  /// made before the question (the kernel queued its event before the
  /// writer's call returned) is in it.
  func changes(since token: String?) -> ChangedFiles {
    drain()
    watchMissingTables()
    sequence += 1
    let now = ChangedFiles(token: "\(epoch).\(sequence)", changed: [:])
    guard let token, let dot = token.lastIndex(of: "."), token[..<dot] == epoch,
      let since = UInt64(token[token.index(after: dot)...])
    else { return now }
    var answer = now
    for (table, start) in wholeSince where start <= since {
      answer.changed[table] = (names[table] ?? [:]).compactMap { $0.value > since ? $0.key : nil }.sorted()
    }
    return answer
  }
}
