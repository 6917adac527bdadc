import FolioCore

/// What `folio sync` did.
public struct SyncSummary: Sendable {
  /// How the local branch moved.
  public enum Action: String, Sendable {
    /// Nothing came from the remote.
    case upToDate = "up-to-date"
    /// The remote was ahead; the branch moved forward to it.
    case fastForward = "fast-forward"
    /// Both had changes; a merge commit joined them.
    case merged
  }
  /// The commit made before fetching.
  public var committed: CommitSummary
  /// How the branch moved.
  public var action: SyncSummary.Action
  /// Documents resolved by replaying ops from both sides.
  public var resolvedDocuments: Int
  /// Whether the branch was pushed.
  public var pushed: Bool
  /// How many fetch-merge-push rounds it took (a push that raced another
  /// one is retried).
  public var rounds: Int
  /// The commit the branch ends at.
  public var head: String?
  /// The remote synced with (the upstream's, unless one was named).
  public var remote = "origin"
  /// The branch on the remote that was fetched and pushed to.
  public var remoteBranch: String?
  /// Documents past the size limit that a merge kept as this replica has
  /// them (an older build wrote them): `folio fsck` reports them, and
  /// `folio rm` clears them everywhere.
  public var oversized: [String] = []
  /// Time spent in the system git's fetches and pushes, every round's:
  /// what of the sync was transport, the rest being Folio's commit scan,
  /// validation, merge and checkout.
  public var transferTime: Duration = .zero
}
