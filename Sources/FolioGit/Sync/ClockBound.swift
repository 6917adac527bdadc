import FolioCore
import FolioSystem

/// The clock bound (`sync: max-clock-skew`): what came from another
/// replica may not carry ops stamped past real time plus the bound, or it
/// would drag every replica's clock along.
struct ClockBound {
  /// The store whose bound applies.
  let store: Store

  /// Refuses a fetched commit whose new ops are stamped past the clock
  /// bound, before anything of it is merged or checked out.
  /// - Parameters:
  ///   - theirs: the fetched commit.
  ///   - ours: the local commit, or nil when every op is new (a clone).
  ///   - cache: where the logs read are kept for the merge that follows.
  func checkClock(
    of theirs: GitOID, against ours: GitOID?, repository: GitRepository, cache: OpLogCache? = nil
  ) throws {
    try Self.checkClock(
      of: theirs, against: ours, repository: repository, bound: store.config.sync.maxClockSkew, cache: cache)
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

  /// Refuses an op log, handed to the merge driver, whose new lines since
  /// `base` are stamped past the clock bound.
  func checkClock(ofLog theirs: [UInt8], base: [UInt8], path: String) throws {
    let name = String(path.split(separator: "/").last ?? "")
    let history = OpHistory(files: [name: theirs])
    let baseHistory = OpHistory(files: [name: base])
    try history.checkClock(
      since: baseHistory, now: SystemClock.nowMilliseconds(), bound: store.config.sync.maxClockSkew)
  }
}
