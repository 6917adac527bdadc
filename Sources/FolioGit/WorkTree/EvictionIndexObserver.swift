import FolioCore

/// Keeps git's skip-worktree flags in step with evictions after every
/// transaction.
package struct EvictionIndexObserver: CommitObserver {
  package init() {}

  package func storeDidLand(_ store: Store, writes: [Journal.Write], restored: Set<String>) {
    Self.markEvictionsInIndexIfPossible(writes, restored: restored, in: store)
  }

  /// Brings git's index in step with the evictions among `writes`: a
  /// document deleted by an eviction gets skip-worktree on its index entry
  /// (if git tracks it), so `git status` shows no deletion and
  /// `git commit -a` records none; a document in `restored` (written again
  /// after an eviction) loses the flag, so git sees its file again.
  ///
  /// Called with the lock held, after the journal's files are written and
  /// before the journal is cleared: a crash in between redoes the journal
  /// on the next open, and this with it. The mark in `evicted.json` is
  /// saved before any file goes, so a missing file is never taken for a
  /// delete even if the index is never reached; `folio commit` sets the
  /// flag too.
  static func markEvictionsInIndex(_ writes: [Journal.Write], restored: Set<String> = [], in store: Store)
    throws
  {
    let deleted = writes.filter { $0.new == nil }.map { store.relative($0.path) }
    guard !deleted.isEmpty || !restored.isEmpty else { return }
    let evicted = try store.evictions.paths()
    let skip = deleted.filter { evicted.contains($0) }
    guard !skip.isEmpty || !restored.isEmpty,
      let repository = try GitRepository.open(workTree: store.rootPath)
    else { return }
    let index = try repository.index()
    var changed = false
    for path in skip {
      guard let entry = index.entry(at: path), !entry.skipWorktree else { continue }
      try index.add(path: path, id: entry.id, filePath: nil, skipWorktree: true, mode: entry.mode)
      changed = true
    }
    for path in restored where !evicted.contains(path) {
      // No stat data: the file may differ from the entry's blob, and git
      // must rehash it to see that.
      guard let entry = index.entry(at: path), entry.skipWorktree else { continue }
      try index.add(path: path, id: entry.id, filePath: nil, mode: entry.mode)
      changed = true
    }
    if changed { try index.write() }
  }

  /// ``markEvictionsInIndex(_:restored:in:)`` past a transaction's durability
  /// point, where a failure (git holding `index.lock`, say) must not undo or
  /// fail a write that has happened: the next `folio commit` or sync sets
  /// the flags instead, from `evicted.json`.
  static func markEvictionsInIndexIfPossible(
    _ writes: [Journal.Write], restored: Set<String> = [], in store: Store
  ) {
    _ = try? markEvictionsInIndex(writes, restored: restored, in: store)
  }
}
