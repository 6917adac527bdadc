import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// How an index learns what changed behind Folio's back without a stat of
/// every document file before each query.
///
/// The rule, in order of cost:
/// 1. **Under a watch.** After one full check made while an inotify watch
///    was already on the folder, every later change raises an event, so a
///    check re-reads only the documents named by events since (and those
///    whose entries a log reload changed). A lost event (`IN_Q_OVERFLOW`),
///    a folder moved, removed or replaced, or another process's compaction
///    falls back to the full check.
/// 2. **Vouched for by a publisher.** A fresh process has seen no events. If
///    another process on this store runs an ``IndexPublisher`` (it holds
///    `.git/folio/index/publisher.lock` and answers on `publisher.sock`), it
///    drains its own watch when asked, writes what changed to the index log,
///    and answers with the base generation and the log length that now
///    describe the folder. The asker trusts that much of the index; it still
///    checks the entries that stat data cannot vouch for ("racy": recorded
///    within a second of the file's change) and everything appended to the
///    log after the answer. No answer, a refusal or any mismatch falls back
///    to the full check.
/// 3. **The full check.** A stat of every file, reading those whose stat
///    data changed. Always correct, and the only mode without a watch (no
///    inotify, or a network or FUSE file system, where another machine's
///    writes raise no events here).
extension TableIndex {
  /// What a full check covers for `contents`.
  private func isClean(contents: Bool) -> Bool {
    watch != nil && (contents ? cleanContents : cleanListing)
  }

  /// Checks the index against the files, as cheaply as the rule above
  /// allows, repairing what changed.
  ///
  /// - Parameters:
  ///   - contents: whether document contents matter (see ``fullCheck(contents:)``).
  ///   - watcher: the process's watcher; nil when it has none.
  ///   - key: this index's key in the cache, which owns the watch.
  ///   - drain: hands every queued event to its index.
  ///   - publisher: asks a publisher about this table; nil not to ask.
  func verify(
    contents: Bool, watcher: IndexWatcher?, key: String, drain: () -> Void,
    publisher: (() -> PublisherAnswer?)?
  ) throws {
    if let current = watch {
      // An ancestor folder renamed or replaced raises no event on this watch.
      var st = stat()
      if stat(folder, &st) != 0 || UInt64(st.st_dev) != current.device || UInt64(st.st_ino) != current.inode {
        watcher?.unwatch(current, owner: key)
        loseWatch()
      }
    }
    if isClean(contents: contents) {
      try checkPending()
      return
    }
    // A full check. Watch first, so that no change after the check starts
    // goes unseen; events queued before it are covered by the check.
    cleanListing = false
    cleanContents = false
    if watch == nil, let watcher { watch = watcher.watch(folder, table: table, owner: key) }
    if watch != nil { drain() }
    if let reply = publisher?(), try checkTrusting(reply) {
      // Everything pending changed before the publisher's answer. Without
      // a watch of its own (a process that runs one query), the answer
      // holds for this check only.
      pending = []
      if watch != nil {
        cleanListing = true
        cleanContents = true
      }
      return
    }
    try fullCheck(contents: contents)
    // Everything pending changed before the check began.
    pending = []
    if watch != nil {
      cleanListing = true
      if contents { cleanContents = true }
    }
  }

  /// Forgets the watch (the folder or the kernel's watch is gone).
  func loseWatch() {
    watch = nil
    cleanListing = false
    cleanContents = false
  }

  /// Takes one inotify event for this index's folder, from `watcher`,
  /// where this index's watches belong to `key`.
  func note(_ event: Inotify.Event, watch descriptor: Int32, watcher: IndexWatcher, key: String) {
    guard var current = watch, current.set.contains(descriptor) else { return }
    let changes = current.set.interpret(
      event, add: { watcher.addWatch($0, owner: key) }, remove: { watcher.removeWatch($0, owner: key) })
    if changes.contains(.lost) {
      watcher.unwatch(current, owner: key)
      loseWatch()
      return
    }
    watch = current
    for case .file(let name) in changes {
      if let pk = table.pk(fromDocumentName: name) { pending.insert(ExactKey(pk)) }
    }
  }

  /// Events were lost: everything must be checked again.
  func noteOverflow() {
    cleanListing = false
    cleanContents = false
  }

  /// Re-checks the documents in `pending`: a stat, and a read when the stat
  /// data differs from the entry's or the entry is racy. They stay pending
  /// if a read fails, so the next query reports it again.
  private func checkPending() throws {
    QueryStatistics.countCheck(.changed, folder: folder)
    guard !pending.isEmpty else { return }
    let changes = try recheck(pending.map(\.string))
    pending = []
    record(changes, persist: true)
  }

  /// The records that bring the entries of `pks` in line with their files.
  private func recheck(_ pks: [String]) throws -> [IndexLog.Record] {
    let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    var changes: [IndexLog.Record] = []
    if dirfd < 0 {
      for pk in pks where isLive(pk) { changes.append(.document(pk: pk, entry: nil)) }
      return changes
    }
    defer { close(dirfd) }
    for pk in pks {
      let current = currentEntry(pk)
      if let current, !current.isRacy, Self.statAt(dirfd, pk: pk, table: table) == current.stat { continue }
      let fresh = try readEntry(pk: pk, dirfd: dirfd)
      if fresh != current || fresh?.isRacy == false && current?.isRacy == true {
        changes.append(.document(pk: pk, entry: fresh))
      }
    }
    return changes
  }

  /// Uses a publisher's answer (rule 2): true if it applies and the
  /// entries it cannot vouch for were checked; false to take the full check.
  private func checkTrusting(_ reply: PublisherAnswer) throws -> Bool {
    // The publisher's folder must be this one: the one watched, or else
    // the one the path names now.
    var identity = watch.map { ($0.device, $0.inode) }
    if identity == nil {
      var st = stat()
      if stat(folder, &st) == 0 { identity = (UInt64(st.st_dev), UInt64(st.st_ino)) }
    }
    guard reply.signature == signature, let identity, reply.device == identity.0, reply.inode == identity.1
    else { return false }
    // The answer must describe exactly what this process replays: the same
    // base, and at least the log the publisher wrote up to its answer.
    if base?.generation != reply.generation || loadedLogSize < reply.logSize || !exactReplay {
      forgetLog()
      try load()
    }
    guard let base, base.generation == reply.generation, loadedLogSize >= reply.logSize, exactReplay else {
      return false
    }
    QueryStatistics.countCheck(.trusted, folder: folder)
    var suspects = Set<ExactKey>()
    for (pk, end) in loadedRecordEnds where end > reply.logSize { suspects.insert(ExactKey(pk)) }
    for (key, item) in overlay { if let entry = item.entry, entry.isRacy { suspects.insert(key) } }
    let overridden = self.overridden
    // The base lists its racy records: a fresh process need not touch
    // every record (and fault in the whole file) to find them.
    for index in 0..<base.racyCount {
      let doc = base.racyDocument(index)
      if !overridden[doc] { suspects.insert(ExactKey(base.pk(doc))) }
    }
    record(try recheck(suspects.map(\.string)), persist: true)
    return true
  }

  /// The state a publisher may vouch for: the base generation and the log
  /// length whose replay is exactly this process's checked state; nil if
  /// the files hold anything else (another process appended or compacted,
  /// a repair could not be written, or a torn line).
  func publishableState() -> (generation: UInt64, logSize: Int)? {
    guard let base, exactReplay, watch != nil, cleanContents, pending.isEmpty else { return nil }
    var result: (UInt64, Int)?
    IndexNames.withLock(lockPath, blocking: true) {
      guard FileStat.of(basePath) == baseIdentity else { return }
      let size = Int(FileStat.of(logPath)?.size ?? 0)
      guard size == loadedLogSize else { return }
      result = (base.generation, size)
    }
    return result
  }
}
