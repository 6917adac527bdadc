import FolioCore
import FolioSystem

extension Store {
  /// Refuses a fetched commit whose new ops are stamped past the clock
  /// bound, before anything of it is merged or checked out.
  /// - Parameters:
  ///   - theirs: the fetched commit.
  ///   - ours: the local commit, or nil when every op is new (a clone).
  ///   - cache: where the logs read are kept for the merge that follows.
  func checkClock(
    of theirs: GitOID, against ours: GitOID?, repository: GitRepository, cache: OpLogCache? = nil
  ) throws {
    try Store.checkClock(
      of: theirs, against: ours, repository: repository, bound: config.sync.maxClockSkew, cache: cache)
  }

  /// ``checkClock(of:against:repository:cache:)`` with an explicit bound,
  /// for a clone, which has no trusted config yet.
  static func checkClock(
    of theirs: GitOID, against ours: GitOID?, repository: GitRepository, bound: Duration,
    cache: OpLogCache? = nil
  ) throws {
    let incoming = try OpHistory(
      tree: try repository.commit(theirs).tree(), repository: repository, cache: cache)
    let base = try ours.map {
      try OpHistory(tree: try repository.commit($0).tree(), repository: repository, cache: cache)
    }
    try incoming.checkClock(since: base, now: SystemClock.nowMilliseconds(), bound: bound)
  }
}

extension Store {
  /// The post-merge half of the clock bound for plain `git pull`, which
  /// merges op logs without Folio (each replica's log changes on one side
  /// only, so git never calls the driver for it): when what came in holds
  /// ops stamped past the bound, moves the branch back to `ORIG_HEAD` with
  /// Folio's crash-safe checkout, and throws. Call with the lock held.
  /// - Parameters:
  ///   - orig: where the branch was before the pull (`ORIG_HEAD`).
  ///   - head: where the pull left it.
  /// - Throws: `CLOCK_SKEW`, saying whether the pull was undone.
  func undoPullPastClockBound(from orig: GitOID, to head: GitOID, repository: GitRepository) throws {
    guard try repository.isDescendant(head, of: orig) else { return }
    do {
      try checkClock(of: head, against: orig, repository: repository)
    } catch var error as FolioError where error.code == .clockSkew {
      error.message += try undoPull(to: orig, repository: repository)
      throw error
    }
  }

  /// Moves the branch back to `orig` (`ORIG_HEAD`) with Folio's checkout,
  /// undoing a plain `git pull`. Call with the lock held.
  /// - Returns: what happened, to end the refusal's message with.
  func undoPull(to orig: GitOID, repository: GitRepository) throws -> String {
    let blocked = try checkout(orig, branch: try repository.headBranch(), repository: repository)
    if blocked.isEmpty {
      return "; the pull was undone (the branch is back at \(orig.description.prefix(12)))"
    }
    return "; the pull could not be undone because \(blocked.joined(separator: ", ")) changed since: "
      + "run 'git reset --keep ORIG_HEAD' once they are committed"
  }

  /// Refuses an op log, handed to the merge driver, whose new lines since
  /// `base` are stamped past the clock bound.
  func checkClock(ofLog theirs: [UInt8], base: [UInt8], path: String) throws {
    let name = String(path.split(separator: "/").last ?? "")
    let history = OpHistory(files: [name: theirs])
    let baseHistory = OpHistory(files: [name: base])
    try history.checkClock(
      since: baseHistory, now: SystemClock.nowMilliseconds(), bound: config.sync.maxClockSkew)
  }
}
