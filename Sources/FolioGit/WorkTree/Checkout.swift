internal import Clibgit2
import FolioCore
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// Moves the working tree, git's index and the branch to another commit,
/// as `git checkout` does, but crash-safe and never over an edit: a
/// journal names the move before any file changes (a crash is finished at
/// the next open), and a file that differs from both sides stops it.
struct Checkout {
  /// The store checked out.
  let store: Store

  /// Where a checkout in progress is recorded: the commit HEAD moves from
  /// and the one it moves to.
  var journalPath: String { store.privateDirectory + "/checkout" }

  /// One path a checkout changes: the entry before and after (nil where
  /// there is none), each a blob, symlink or gitlink id with git's mode.
  struct CheckoutChange {
    var path: String
    var old: TreeEntryState?
    var new: TreeEntryState?
  }

  /// A tree entry's id and git mode (`0o100644`, `0o100755`, `0o120000`,
  /// `0o160000`).
  struct TreeEntryState: Equatable {
    var id: GitOID
    var mode: UInt32
  }

  /// Moves the working tree, index and `branch` from HEAD's commit to
  /// `target`, crash-safely: every file is written whole (temp file, then
  /// rename, or a swap with the file it replaces), and a journal written
  /// first lets the next open finish the job after a `kill -9`. libgit2's
  /// own checkout truncates files in place, so a kill could leave a torn
  /// document. Call with the lock held.
  ///
  /// Every path the target brings is validated first
  /// (``TreePathValidator``), and every folder in the way is checked, so
  /// nothing is written (and no journal that could never be finished) for a
  /// hostile tree. Modes are kept as git keeps them: symlinks, executables,
  /// gitlinks (an empty folder); links are never followed.
  /// - Parameter knownBlob: the bytes of a blob already in memory (what a
  ///   merge just wrote), or nil to read it from the repository.
  /// - Returns: the paths in the way (changed since the commit); nothing is
  ///   written then.
  /// - Throws: `UNSAFE_PATH` naming the commit and the path.
  func checkout(
    _ target: GitOID, branch: String, repository: GitRepository,
    knownBlob: (GitOID) -> [UInt8]? = { _ in nil }
  ) throws -> [String] {
    let from = try repository.headCommit()
    let fromTree = try from?.tree()
    let targetTree = try repository.commit(target).tree()
    try TreePathValidator(repository: repository, config: store.config).validate(
      targetTree, of: target, against: fromTree)
    let changes = try checkoutChanges(from: fromTree, to: targetTree, repository: repository)
    let evicted = try PartialClone(store: store).offTreePaths(target: targetTree, repository: repository)
    let index = try entryLookup(repository)
    let removed = Self.pathsRemoved(by: changes)
    let workTree = WorkTree(root: store.rootPath)
    let blocked = try blockedPaths(
      changes.filter { !evicted.contains($0.path) }, index: index, removed: removed, target: target)
    if !blocked.isEmpty { return blocked }
    let line = (from?.id.description ?? "-") + " " + target.description + " " + branch + "\n"
    try FileSystem.writeAtomically(journalPath, Array(line.utf8), sync: true)
    // One event for live queries in other processes (TransactionMarker).
    // Git's index holds the commit checked out from: after the checkout it
    // holds the target, and the next status starts from there.
    let prior = WorkTreeScan(store: store).currentWorkTreeState(head: from?.id, repository: repository)
    try TransactionMarker.around(privateDirectory: store.privateDirectory) {
      try finishCheckout(
        changes, target: target, branch: branch, repository: repository, evicted: evicted, workTree: workTree,
        knownBlob: knownBlob, prior: prior)
    }
    // A table renamed in the target (`folio tables rename`) leaves its old
    // folder empty, which git would remove; rmdir removes only an empty one.
    if let id = targetTree.blobID(at: Config.fileName),
      let target = try? Config(bytes: try repository.blob(id), file: Config.fileName)
    {
      for rename in target.renames where rename.oldPath != rename.newPath {
        rmdir(store.rootPath + "/" + rename.oldPath)
      }
    }
    return []
  }

  /// Git's index for looking up entries: read in place when this reader
  /// can, else through libgit2.
  private func entryLookup(_ repository: GitRepository) throws -> any IndexEntryLookup {
    if let file = try GitIndexFile.open(repository.gitDirectory + "/index") { return file }
    return try libgit2Index(repository)
  }

  private func libgit2Index(_ repository: GitRepository) throws -> GitIndex {
    let index = try repository.index()
    try index.readFromDisk()
    return index
  }

  /// Whether something in the working tree stands in the way of `change`:
  /// a file changed since the commit, a folder with files the checkout
  /// keeps, a fifo or device. (A function of its own: written inline in
  /// ``checkout(_:branch:repository:)``, the loop crashed the 6.3.1
  /// optimizer's copy propagation.)
  /// - Throws: `UNSAFE_PATH` when the path lies behind a link or file the
  ///   checkout keeps.
  @inline(never)
  private func isBlocked(
    _ change: CheckoutChange, entry: GitIndex.Entry?, workTree: WorkTree, removed: Set<String>, target: GitOID
  ) throws -> Bool {
    let path = change.path
    let old = change.old
    let new = change.new
    switch try worktreeEntry(path, entry: entry, workTree: workTree) {
    case .entry(let current):
      return current != old && current != new
    case .folder:
      // A folder where a file goes (a folder replaced by a file): fine
      // when everything in it goes too, as git checks.
      guard let new, new.mode != TreePathValidator.gitlinkMode else { return false }
      return try FileSystem.filesBelow(root: store.rootPath, relative: path).contains {
        !removed.contains($0)
      }
    case .shadowed(let prefix):
      // Behind a file or link the checkout removes: absent. Behind one it
      // keeps: git would not write there either.
      if new != nil && !removed.contains(prefix) {
        throw FolioError(
          .unsafePath,
          "commit \(target.description.prefix(12)) brings '\(path)', but '\(prefix)' in the working "
            + "tree is a symlink or a file, and Folio never writes through one; move it aside, then run "
            + "the command again",
          path: path)
      }
      return false
    case .other:
      return true
    }
  }

  /// The paths of `changes` that something in the working tree stands in
  /// the way of (``isBlocked(_:entry:workTree:removed:target:)``), sorted;
  /// looked at by two threads for a large checkout, as writing is.
  /// - Throws: the error of the first change in order that has one.
  private func blockedPaths(
    _ changes: [CheckoutChange], index: any IndexEntryLookup, removed: Set<String>, target: GitOID
  ) throws -> [String] {
    let jobs = CheckoutCheckJobs(
      store: store, changes: changes, entries: changes.map { index.entry(at: $0.path) }, removed: removed,
      target: target)
    return try inTwoParts(changes.count) { i, workTree in
      try Checkout(store: jobs.store).isBlocked(
        jobs.changes[i], entry: jobs.entries[i], workTree: workTree, removed: jobs.removed,
        target: jobs.target)
    }.map { changes[$0].path }.sorted()
  }

  /// From how many paths a checkout's work is split over two threads.
  static let checkoutThreadsFrom = 256

  /// Runs `body` for `count` paths of a checkout, split into two
  /// contiguous parts on two threads (one thread below
  /// ``checkoutThreadsFrom``), each part with its own ``WorkTree`` and so
  /// mostly in one folder: what a checkout does per file is mostly the
  /// kernel's work.
  /// - Parameters:
  ///   - split: where the second part starts; nil for the middle.
  ///   - unlinks: who unlinks the files the work trees swap out (see
  ///     ``WorkTree/init(root:unlinks:)``).
  /// - Returns: the indices `body` returned true for, in order.
  /// - Throws: the error of the lowest index that had one; each thread
  ///   stops at its first.
  private func inTwoParts(
    _ count: Int, split: Int? = nil, unlinks: DeferredUnlinks? = nil,
    _ body: @Sendable (Int, WorkTree) throws -> Bool
  ) throws -> [Int] {
    let middle = split ?? (count < Self.checkoutThreadsFrom ? count : count / 2)
    let parts = [0..<middle, middle..<count].filter { !$0.isEmpty }
    let outcome = Mutex<(flagged: [Int], error: (at: Int, error: any Error)?)>(([], nil))
    let root = store.rootPath
    DispatchQueue.concurrentPerform(iterations: parts.count) { part in
      let workTree = WorkTree(root: root, unlinks: unlinks)
      for i in parts[part] {
        do {
          if try body(i, workTree) { outcome.withLock { $0.flagged.append(i) } }
        } catch {
          outcome.withLock { if $0.error.map({ i < $0.at }) ?? true { $0.error = (i, error) } }
          return
        }
      }
    }
    let (flagged, error) = outcome.withLock { $0 }
    if let error { throw error.error }
    return flagged.sorted()
  }

  /// What the threads of ``blockedPaths(_:index:removed:target:)`` share.
  /// `@unchecked Sendable`: they only read it.
  private struct CheckoutCheckJobs: @unchecked Sendable {
    let store: Store
    let changes: [CheckoutChange]
    let entries: [GitIndex.Entry?]
    let removed: Set<String>
    let target: GitOID
  }

  /// The paths whose entry goes or changes type (a file that becomes a
  /// link or a folder), so what stands there now may be replaced.
  @inline(never)
  static func pathsRemoved(by changes: [CheckoutChange]) -> Set<String> {
    var removed = Set<String>()
    for change in changes {
      guard let old = change.old else { continue }
      if let new = change.new, new.mode == old.mode { continue }
      removed.insert(change.path)
    }
    return removed
  }

  /// The entries that differ between two trees, one per path: a type change
  /// (a file becoming a symlink), which libgit2 reports as a removal and an
  /// addition, is one change here.
  func checkoutChanges(from old: GitTree?, to new: GitTree, repository: GitRepository) throws
    -> [CheckoutChange]
  {
    var byPath: [String: CheckoutChange] = [:]
    var order: [String] = []
    for change in try repository.fileChanges(from: old, to: new) {
      if byPath[change.path] == nil {
        order.append(change.path)
        byPath[change.path] = CheckoutChange(path: change.path, old: nil, new: nil)
      }
      if let id = change.old {
        byPath[change.path]!.old = TreeEntryState(id: id, mode: change.oldMode)
      }
      if let id = change.new {
        byPath[change.path]!.new = TreeEntryState(id: id, mode: change.newMode)
      }
    }
    return order.map { byPath[$0]! }
  }

  /// Writes the files, the index and the ref, then drops the journal. Safe
  /// to run again: a file that holds neither the old nor the new version was
  /// changed by someone since, and is left alone.
  private func finishCheckout(
    _ changes: [CheckoutChange], target: GitOID, branch: String, repository: GitRepository,
    evicted: PartialClone.OffTreePaths, workTree: WorkTree, knownBlob: (GitOID) -> [UInt8]? = { _ in nil },
    prior: WorkTreeState? = nil
  ) throws {
    var leftAlone = Set<String>()
    let indexPath = repository.gitDirectory + "/index"
    let indexFile = try GitIndexFile.open(indexPath)
    let index: any IndexEntryLookup =
      try indexFile.map { $0 as any IndexEntryLookup } ?? libgit2Index(repository)
    let progress = CheckoutProgress(pauseAt: max(1, changes.count / 2))
    // Removals first, deepest first, so a file replaced by a folder (or the
    // reverse) finds its place free.
    let removals = changes.filter { $0.new == nil }.sorted { $0.path > $1.path }
    let writes = changes.filter { $0.new != nil }.sorted { $0.path < $1.path }
    for change in removals where !evicted.contains(change.path) {
      let entry = index.entry(at: change.path)
      if try apply(change, entry: entry, content: [], workTree: workTree) {
        progress.wrote(store)
      } else {
        leftAlone.insert(change.path)
      }
    }
    let written = writes.filter { !evicted.contains($0.path) }
    // The files the writes replace are unlinked on threads of their own
    // (DeferredUnlinks), until the journal goes: a crash before leaves
    // them for the next checkout's `removeLeftover`.
    let unlinks =
      written.count >= Self.checkoutThreadsFrom && DeferredUnlinks.payOff(under: store.rootPath)
      ? DeferredUnlinks() : nil
    leftAlone.formUnion(
      try writeFiles(
        written, index: index, repository: repository, knownBlob: knownBlob, unlinks: unlinks,
        progress: progress))
    try FileSystem.syncFileSystem(containing: store.rootPath)
    var edits: [GitIndex.Edit] = []
    edits.reserveCapacity(changes.count)
    for change in changes {
      guard let new = change.new else {
        edits.append(.init(path: change.path, entry: nil))
        continue
      }
      let skip = evicted.contains(change.path)
      // No stat data for a file someone changed since: git rehashes it.
      let statFrom = skip || leftAlone.contains(change.path) ? nil : store.rootPath + "/" + change.path
      edits.append(
        .init(
          path: change.path,
          entry: GitIndex.entry(id: new.id, filePath: statFrom, mode: new.mode, skipWorktree: skip)
        ))
    }
    edits.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    if let indexFile {
      // Copied around the edits: a few milliseconds for 300k entries, where
      // libgit2 would read them all first.
      try indexFile.write(to: indexPath, applying: edits, policy: repository.splitIndexPolicy)
    } else {
      try libgit2Index(repository).writeApplying(
        edits, matching: try repository.commit(target).tree(), repository: repository)
    }
    try repository.setReference(branch, to: target, message: "folio sync")
    if let prior, let checksum = WorkTreeScan.indexChecksum(indexPath) {
      // What was left alone differs from the target now.
      var dirty = prior.dirty
      for table in store.config.tables {
        let folder = table.path + "/"
        let names = leftAlone.filter { $0.hasPrefix(folder) }.map { String($0.dropFirst(folder.count)) }
        if !names.isEmpty { dirty[table.name, default: []] += names }
      }
      let ownLog = Store.opsFolder + "/" + store.opLogName
      WorkTreeScan(store: store).saveWorkTreeState(
        WorkTreeState(
          head: target.description, index: checksum, token: prior.token, dirty: dirty,
          ownLog: changes.contains { $0.path == ownLog } ? nil : prior.ownLog))
    }
    try unlinks?.finish()
    removeFoldersLeftEmpty(by: removals)
    _ = try FileSystem.remove(journalPath)
  }

  /// Removes the folders inside a table's folder that `removals` left
  /// empty, innermost first, as git's checkout does: a subfolder whose last
  /// document went, or the folders of a layout another replica converted
  /// the table from. The table's folder itself stays, and so does a folder
  /// that still holds something.
  private func removeFoldersLeftEmpty(by removals: [CheckoutChange]) {
    var folders = Set<String>()
    for change in removals {
      guard let table = store.config.tables.first(where: { change.path.hasPrefix($0.path + "/") }) else {
        continue
      }
      var folder = FileSystem.split(change.path).directory
      while folder.utf8.count > table.path.utf8.count {
        guard folders.insert(folder).inserted else { break }
        folder = FileSystem.split(folder).directory
      }
    }
    for folder in folders.sorted(by: { $0.utf8.count > $1.utf8.count }) {
      rmdir(store.rootPath + "/" + folder)
    }
  }

  /// Brings one path to `change.new` when it holds `change.old` (or
  /// already the new entry); `content` is the new blob's bytes.
  /// - Returns: false when something else is there (changed since the
  ///   commit), which is left alone.
  private func apply(
    _ change: CheckoutChange, entry: GitIndex.Entry?, content: [UInt8], workTree: WorkTree
  ) throws -> Bool {
    let current: TreeEntryState?
    switch try worktreeEntry(change.path, entry: entry, workTree: workTree) {
    case .entry(let state): current = state
    case .folder:
      current = change.old?.mode == TreePathValidator.gitlinkMode ? change.old : nil
    case .shadowed: current = nil
    case .other: return false
    }
    if current == change.new {
      // Perhaps a checkout stopped between its swap and its unlink.
      if let new = change.new, new.mode != TreePathValidator.gitlinkMode {
        try workTree.removeLeftover(change.path)
      }
      return true
    }
    if current != change.old { return false }
    if let new = change.new {
      try workTree.write(change.path, content: content, mode: new.mode)
    } else {
      try workTree.remove(change.path)
    }
    return true
  }

  /// How many files a checkout reads from the repository before writing
  /// them: a bound on what a large checkout holds in memory.
  static let checkoutBatch = 4096

  /// Writes the entries of `writes` (in path order), each batch's blobs
  /// read first, then written by two threads (``inTwoParts(_:split:unlinks:_:)``):
  /// two threads write 15,000 documents into one folder in about 60% of
  /// the time one takes.
  ///
  /// One thread writes the first half of `writes` and the other the
  /// second, a batch from each half at a time, so that, with files in two
  /// folders (a merge's conflict records and a table's documents), each
  /// thread stays in a folder of its own for longer: in one folder, a
  /// thread creating a file holds the folder's lock while ext4 looks for
  /// a free inode, and the other spins on it.
  /// - Returns: the paths left alone (changed since the commit).
  private func writeFiles(
    _ writes: [CheckoutChange], index: any IndexEntryLookup, repository: GitRepository,
    knownBlob: (GitOID) -> [UInt8]?, unlinks: DeferredUnlinks?, progress: CheckoutProgress
  ) throws -> Set<String> {
    var leftAlone = Set<String>()
    let half = writes.count < Self.checkoutThreadsFrom ? writes.count : (writes.count + 1) / 2
    let chunk = half == writes.count ? Self.checkoutBatch : Self.checkoutBatch / 2
    var start = 0
    // Each batch written is flushed on another thread while the next is
    // written, so that the sync after the last batch finds little left;
    // only that sync's outcome counts.
    let flushes = DispatchGroup()
    defer { flushes.wait() }
    let root = store.rootPath
    while start < half {
      if start > 0 {
        flushes.wait()
        DispatchQueue.global().async(group: flushes) { try? FileSystem.syncFileSystem(containing: root) }
      }
      let front = start..<min(start + chunk, half)
      let back = min(half + start, writes.count)..<min(half + start + chunk, writes.count)
      // libgit2's handles stay on this thread: the entries and blobs are
      // read here, before the threads start.
      var jobs = CheckoutWriteJobs(store: store, progress: progress)
      for change in writes[front] + writes[back] {
        let new = change.new!
        jobs.changes.append(change)
        jobs.entries.append(index.entry(at: change.path))
        jobs.contents.append(
          new.mode == TreePathValidator.gitlinkMode ? [] : try knownBlob(new.id) ?? repository.blob(new.id))
      }
      let left = try inTwoParts(jobs.changes.count, split: front.count, unlinks: unlinks) {
        [jobs] i, workTree in
        guard
          try Checkout(store: jobs.store).apply(
            jobs.changes[i], entry: jobs.entries[i], content: jobs.contents[i], workTree: workTree)
        else { return true }
        jobs.progress.wrote(jobs.store)
        return false
      }
      for i in left { leftAlone.insert(jobs.changes[i].path) }
      start = front.upperBound
    }
    return leftAlone
  }

  /// One batch of a checkout's writes, shared by the threads that write
  /// it. `@unchecked Sendable`: the threads only read it, and each writes
  /// its own part of the working tree.
  private struct CheckoutWriteJobs: @unchecked Sendable {
    let store: Store
    let progress: CheckoutProgress
    var changes: [CheckoutChange] = []
    var entries: [GitIndex.Entry?] = []
    var contents: [[UInt8]] = []

    init(store: Store, progress: CheckoutProgress) {
      self.store = store
      self.progress = progress
    }
  }

  /// How many files a checkout has written, across its threads: halfway,
  /// a test may pause it there (``TestPause/Point/checkout``).
  private final class CheckoutProgress: Sendable {
    let written = Atomic<Int>(0)
    let pauseAt: Int

    init(pauseAt: Int) { self.pauseAt = pauseAt }

    func wrote(_ store: Store) {
      if written.add(1, ordering: .relaxed).newValue == pauseAt { TestPause.at(.checkout, in: store) }
    }
  }

  /// Finishes a checkout a crash interrupted. Call with the lock held.
  /// - Throws: what keeps it from finishing, with the journal kept and how
  ///   to get past it; read-only commands still work (see
  ///   ``Store/pendingCheckoutProblem()``).
  func recoverCheckout() throws {
    guard let bytes = try FileSystem.read(journalPath) else { return }
    let parts = String(decoding: bytes, as: UTF8.self).split(separator: " ").map {
      $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    guard parts.count == 3, let target = GitOID(hex: parts[1]) else {
      _ = try FileSystem.remove(journalPath)  // torn: written before anything else
      return
    }
    do {
      let repository = try store.openRepository()
      let fromTree = try GitOID(hex: parts[0]).map { try repository.commit($0).tree() }
      let targetTree = try repository.commit(target).tree()
      // The journal is only written for a validated tree; validating again
      // keeps a journal from an older Folio from writing a hostile one.
      try TreePathValidator(repository: repository, config: store.config).validate(
        targetTree, of: target, against: fromTree)
      let changes = try checkoutChanges(from: fromTree, to: targetTree, repository: repository)
      try finishCheckout(
        changes, target: target, branch: parts[2], repository: repository,
        evicted: try PartialClone(store: store).offTreePaths(),
        workTree: WorkTree(root: store.rootPath))
    } catch var error as FolioError {
      error.message +=
        "; a checkout of commit \(target.description.prefix(12)) that a sync started could not be finished. "
        + "Read-only commands still work. Fix the cause and run the command again, or drop the checkout "
        + "with 'rm \(journalPath)' and 'git reset --hard' (local changes since the last commit "
        + "are lost then)"
      throw error
    }
  }

  /// What a checkout finds at a path in the working tree.
  private enum WorktreeEntry {
    /// A file or symlink as a tree entry (nil: nothing there), or a
    /// gitlink's folder.
    case entry(TreeEntryState?)
    /// A folder that is not a gitlink of the index.
    case folder
    /// A leading folder is a symlink or a file.
    case shadowed(String)
    /// A fifo, socket or device.
    case other
  }

  /// The entry at `relative`, never following a link. A file whose stat
  /// data matches its index entry (`entry`, looked up by the caller: the
  /// threads of a checkout do not share the index) holds the entry's
  /// blob, as `folio commit` and git assume too, so only changed files are
  /// read.
  private func worktreeEntry(_ relative: String, entry: GitIndex.Entry?, workTree: WorkTree) throws
    -> WorktreeEntry
  {
    var st = stat()
    switch try workTree.kind(relative, status: &st) {
    case .absent: return .entry(nil)
    case .shadowed(let prefix): return .shadowed(prefix)
    case .other: return .other
    case .directory:
      if let entry, entry.mode == TreePathValidator.gitlinkMode {
        return .entry(TreeEntryState(id: entry.id, mode: entry.mode))
      }
      return .folder
    case .symlink:
      guard let target = try workTree.read(relative) else {
        return .entry(nil)
      }
      return .entry(
        TreeEntryState(id: try GitRepository.hashBlob(target), mode: TreePathValidator.symlinkMode))
    case .file(let executable):
      let mode = executable ? TreePathValidator.executableMode : TreePathValidator.blobMode
      if let entry, !entry.skipWorktree, entry.mode == mode, WorkTreeScan.statMatches(entry, st) {
        return .entry(TreeEntryState(id: entry.id, mode: mode))
      }
      guard let bytes = try workTree.read(relative) else {
        return .entry(nil)
      }
      return .entry(TreeEntryState(id: try GitRepository.hashBlob(bytes), mode: mode))
    }
  }

}
