import FolioCore
import FolioJSON
import FolioSystem

/// What `folio compact` did.
public struct CompactionSummary: Sendable {
  /// The commit every known ref has merged; ops it holds were dropped.
  public var mergedEverywhere: String?
  /// Op log lines dropped.
  public var droppedOps: Int
  /// Op log lines kept.
  public var keptOps: Int
  /// The commit that records the smaller logs, if anything was dropped.
  public var commit: String?
}
