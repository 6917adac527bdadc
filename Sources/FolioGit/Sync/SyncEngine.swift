import FolioCore
import FolioJSON
import FolioSystem
import Foundation
import Synchronization

/// `folio sync`: commit, fetch, merge by replay, check out and push, in
/// rounds until the push lands or the remote's verdict is clear. The
/// network round trips run without the store lock; the merge and the
/// checkout hold it. ``Store/sync(remote:push:)`` hands its calls here.
struct SyncEngine {
  let store: Store

  /// How many fetch-merge-push rounds a sync makes before it gives up on
  /// a remote that keeps moving.
  static let syncRounds = 20

  /// How many refusals in a row, with the remote's tip unchanged, make the
  /// refusal the remote's own verdict rather than a lost race.
  static let refusalsForVerdict = 3

  /// The pause before round `round + 1`: a random time up to 25 ms × 2^round,
  /// capped at 2 s ("full jitter"), so replicas that lost one race do not
  /// meet again in the next.
  static func pauseBeforeRetry(after round: Int) {
    let ceiling = min(2_000_000, 25_000 << min(round, 16))
    usleep(UInt32(Int.random(in: 0..<ceiling)))
  }

  /// ``Store/sync(remote:push:)``.
  func sync(remote requested: String?, push: Bool) throws -> SyncSummary {
    // Whatever the outcome: every fetch and merge leaves a pack.
    defer { mergePacksIfMany() }
    var summary = SyncSummary(
      committed: CommitSummary(commit: nil, documents: 0, syntheticOps: 0, problems: []), action: .upToDate,
      resolvedDocuments: 0, pushed: false, rounds: 0, head: nil)
    // The last refusal, the remote tip it refused to build on, and how many
    // refusals in a row met that same tip.
    var refusal: (error: PushRefusal, tip: GitOID?, inARow: Int)?
    for round in 1...Self.syncRounds {
      summary.rounds = round
      // One handle for the round: the index the commit reads serves the
      // checkout too, unless the file changes in between.
      let repository = try store.openRepository()
      let committed = try CommitWriter(store: store).commit(message: nil, repository: repository)
      if round == 1 { summary.committed = committed }
      let logSize = FileSystem.size(store.opLogPath)
      let branch = try repository.headBranch()
      let shortBranch = branch.hasPrefix("refs/heads/") ? String(branch.dropFirst(11)) : branch
      let (remote, remoteBranch) = repository.upstream(of: shortBranch, remote: requested)
      summary.remote = remote
      summary.remoteBranch = remoteBranch
      let clock = ContinuousClock()
      let fetchStart = clock.now
      let theirs = try repository.fetch(remote: remote, branch: remoteBranch, sshKey: store.sshKeyPath)
      if let theirs, repository.isPartialClone(of: remote) {
        // What the merge and the checkout read of the held tables.
        try PartialClone(store: store).fetchHeldBlobs(
          of: try repository.commit(theirs).tree(), since: try repository.headCommit()?.tree(),
          remote: remote,
          repository: repository)
      }
      summary.transferTime += clock.now - fetchStart
      if let verdict = Self.verdict(of: refusal, at: theirs, remote: remote) { throw verdict }
      var oversized: [String] = []
      let (action, resolved, head) = try store.lock.withLock {
        try store.recoverBeforeWrite()
        // Writes made through Folio during the fetch (they all log an op)
        // go into the merge too. An edit made by hand in that window stays
        // pending, and the checkout refuses to overwrite it.
        if FileSystem.size(store.opLogPath) != logSize {
          _ = try CommitWriter(store: store).commitLocked(message: nil, repository: repository)
        }
        return try integrate(theirs, branch: branch, repository: repository, oversized: &oversized)
      }
      summary.oversized += oversized
      if action != .upToDate { summary.action = action }
      summary.resolvedDocuments += resolved
      summary.head = head?.description
      // Validated and merged: now the remote-tracking ref may show it.
      if let theirs { try repository.acceptFetched(remote: remote, branch: remoteBranch, tip: theirs) }
      guard push, let head, head != theirs else { return summary }
      let pushStart = clock.now
      do {
        try repository.push(remote: remote, branch: shortBranch, to: remoteBranch, sshKey: store.sshKeyPath)
        summary.transferTime += clock.now - pushStart
        summary.pushed = true
        return summary
      } catch let error as PushRefusal {
        summary.transferTime += clock.now - pushStart
        // Someone pushed in between: fetch, merge and try again.
        let inARow = refusal.map { $0.tip == theirs ? $0.inARow + 1 : 1 } ?? 1
        refusal = (error, theirs, inARow)
        if round < Self.syncRounds { Self.pauseBeforeRetry(after: round) }
      }
    }
    throw FolioError(
      .pushRejected,
      "remote '\(summary.remote)' kept moving: other replicas pushed first in each of \(Self.syncRounds) "
        + "rounds (last: \(refusal?.error.detail ?? "refused")). Everything is committed and merged locally; "
        + "sync again",
      function: "git_remote_push", remedy: .syncAgain)
  }

  /// The error that ends a sync when the remote stood still through
  /// several refusals of the push (its verdict, not a race), else nil. One
  /// refusal at a still tip is not enough, since a rival push can hold the
  /// remote's ref lock and then fail itself. A refusal a server setting
  /// makes says which setting.
  private static func verdict(
    of refusal: (error: PushRefusal, tip: GitOID?, inARow: Int)?, at tip: GitOID?, remote: String
  ) -> FolioError? {
    guard let refusal, refusal.error.reason == .refused, refusal.tip == tip,
      refusal.inARow >= Self.refusalsForVerdict
    else { return nil }
    let fix =
      SystemGit.serverSetting(in: refusal.error.detail) ?? "ask the remote's owner, or push to another branch"
    return FolioError(
      .pushRejected,
      "remote '\(remote)' refused the push: \(refusal.error.detail). Everything is committed and merged locally; "
        + fix,
      function: "git_remote_push")
  }

  /// Brings `theirs` into the current branch: nothing, a fast-forward or a
  /// merge commit, then updates the working tree and index. Call with the
  /// lock held.
  private func integrate(
    _ theirs: GitOID?, branch: String, repository: GitRepository, oversized: inout [String]
  ) throws -> (
    SyncSummary.Action, Int, GitOID?
  ) {
    let ours = try repository.headCommit()?.id
    guard let theirs else {
      _ = try restoreSubscribedDocuments(repository: repository)
      return (.upToDate, 0, ours)
    }
    var target = theirs
    var action = SyncSummary.Action.fastForward
    var resolved = 0
    var latest: HLC?
    var written: [GitOID: [UInt8]] = [:]
    if let ours, try repository.isDescendant(ours, of: theirs) {
      _ = try restoreSubscribedDocuments(repository: repository)
      return (.upToDate, 0, ours)
    }
    // The clock check and the merge read the same op logs.
    let opLogs = OpLogCache()
    try ClockBound(store: store).checkClock(of: theirs, against: ours, repository: repository, cache: opLogs)
    if let ours {
      if try !repository.isDescendant(theirs, of: ours) {
        // Resolved documents and the merge commit go into one pack.
        let merge = try GitRepository.withPackedWrites(workTree: store.rootPath, storingSmallBlobs: true) {
          packed in
          let result = try TreeMerge(repository: packed, config: store.config, opLogs: opLogs).merge(
            ours: ours, theirs: theirs)
          let commit = try packed.createCommit(
            tree: result.tree, parents: [ours, theirs],
            message: "folio: merge \(theirs.description.prefix(12))")
          return (result, commit, packed.writtenBlobs())
        }
        target = merge.1
        written = merge.2
        TestPause.at(.merge, in: store)
        action = .merged
        resolved = merge.0.resolved.count
        oversized = merge.0.oversized
        latest = merge.0.latestStamp
      }
    }
    let tree = try repository.commit(target).tree()
    if latest == nil {
      // What HEAD held was taken in before: only the logs it did not hold
      // can move the clock.
      let known = try ours.map {
        try OpHistory(tree: repository.commit($0).tree(), repository: repository, cache: opLogs).blobIDs
      }
      latest = try OpHistory(tree: tree, repository: repository, cache: opLogs).latestStamp(
        excluding: known ?? [])
    }
    // The stamp first: if the checkout is interrupted and finished by the
    // next open, local stamps still come after every merged op.
    if let latest { try store.clock.observe(remoteStamp: latest) }
    // What the merge wrote and the op logs it read are written to the
    // working tree from memory.
    let blocked = try Checkout(store: store).checkout(target, branch: branch, repository: repository) {
      written[$0] ?? opLogs.cachedBlob($0)
    }
    if !blocked.isEmpty {
      throw FolioError(
        .wouldOverwrite,
        "sync would overwrite changes to \(blocked.joined(separator: ", ")) made since the last commit; "
          + "fix or commit them, then sync again", remedy: .showLeftOutFiles)
    }
    _ = try restoreSubscribedDocuments(repository: repository)
    return (action, resolved, target)
  }
}

extension SyncEngine {
  /// How many packs a repository holds before a sync merges the small ones.
  static let packsBeforeRepack = 24

  /// Merges the small packs syncs have left (each fetch and each merge
  /// writes one), so that an object lookup, which asks every pack, does not
  /// slow down with the store's age: `git repack -d --geometric=2` rewrites
  /// only the packs it needs to so that each is at least twice the size of
  /// the next smaller, which leaves the big ones (an import's) alone.
  /// Outside the store lock: git's readers and writers cope with a repack
  /// running beside them. A failure changes nothing and is not reported;
  /// the next sync tries again. A partial clone is left to `git gc`.
  func mergePacksIfMany() {
    let folder = store.gitDirectory + "/objects/pack"
    guard let names = try? FileSystem.list(folder),
      names.count(where: { $0.hasSuffix(".pack") }) >= Self.packsBeforeRepack,
      // A partial clone's packs from its remote are marked as that remote's
      // to fill in; a geometric repack could merge them into unmarked ones.
      !names.contains(where: { $0.hasSuffix(".promisor") })
    else { return }
    _ = try? SystemGit(gitDirectory: store.gitDirectory, sshKey: nil).run([
      "repack", "-d", "-q", "--geometric=2",
    ])
  }

  /// Brings back evicted documents that a live subscription covers: the
  /// file is restored from HEAD, skip-worktree is cleared, and the eviction
  /// is forgotten. Call with the lock held.
  func restoreSubscribedDocuments(repository: GitRepository) throws -> Int {
    guard !store.subscriptions.targets.isEmpty else { return 0 }
    var evicted = try store.evictions.load()
    guard !evicted.isEmpty, let tree = try repository.headCommit()?.tree() else { return 0 }
    let index = try repository.index()
    // The handle may have read the index before a commit or checkout
    // through another one rewrote it.
    try index.readFromDisk()
    var restored = 0
    for table in store.config.tables {
      for key in (evicted[table.name] ?? []).sorted() {
        let pk = key.string
        let path = try table.path(of: pk)
        guard let id = tree.blobID(at: path) else { continue }
        let bytes = try repository.blob(id)
        guard case .object(let document)? = try? JSONValue(parsing: bytes),
          store.subscriptions.covers(table: table, pk: pk, document: document)
        else { continue }
        let absolute = store.rootPath + "/" + path
        try FileSystem.makeDirectories(FileSystem.split(absolute).directory)
        try FileSystem.writeAtomically(absolute, bytes, sync: true, under: store.rootPath)
        try index.add(path: path, id: id, filePath: absolute)
        evicted[table.name]?.remove(key)
        if evicted[table.name]?.isEmpty == true { evicted[table.name] = nil }
        restored += 1
      }
    }
    if restored > 0 {
      try index.write()
      try store.evictions.save(evicted)
    }
    return restored
  }
}
