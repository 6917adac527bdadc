import FolioCore
import FolioJSON
import FolioSystem

/// The result of comparing the working tree with HEAD.
package struct PendingScan {
  package var documents: [PendingDocument] = []
  /// Paths whose file equals HEAD but whose index stat data is stale.
  package var refresh: [(path: String, id: GitOID)] = []
  /// Evicted documents that need skip-worktree set.
  var evicted: [(path: String, id: GitOID)] = []
  /// Other Folio files that changed (op logs, folio.yaml, .gitattributes).
  var files: [(path: String, bytes: [UInt8]?)] = []
  package var problems: [FolioError] = []
  var ownOps: [OpHistory.DocumentKey: [Op]] = [:]
  var evictedByTable: [String: Set<ExactKey>] = [:]
  /// By table, the document file names that differ from HEAD: the next
  /// scan looks at them again (``WorkTreeState``), until a commit takes them.
  var changedNames: [String: [String]] = [:]
  /// By table, the names of documents left out (not valid, not readable):
  /// looked at again until they are fixed, committed or not.
  var leftOut: [String: [String]] = [:]
  /// Both, by table.
  var dirty: [String: [String]] { changedNames.merging(leftOut) { $0 + $1 } }
}
