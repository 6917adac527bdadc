import FolioCore

/// Which files a scan looks at: for the tables named, only the candidates
/// (the rest are as HEAD has them, which ``WorkTreeState`` vouches for),
/// with git's index read in place.
package struct ScanPlan {
  /// By table, the names that may differ from HEAD.
  var candidates: [String: Set<String>]
  /// Git's index, which holds exactly HEAD's tree; nil when no table is
  /// restricted.
  var indexFile: GitIndexFile?
  /// This replica's op log as committed.
  var ownLog: WorkTreeState.CommittedLog?
}
