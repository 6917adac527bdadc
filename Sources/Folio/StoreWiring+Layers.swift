import FolioCore
import FolioGit
import FolioIndexDaemon
import FolioQuery
import FolioTransfer

/// The composition root: the one place that knows every layer, and hands
/// the store the hooks of those above it.
extension StoreWiring {
  /// Folio's layers: git finds the work tree's folder; an import's landing
  /// and a sync's checkout are finished before the store's own journal;
  /// order indexes, then live queries, hear of each commit, and git's index
  /// of each landed write; `fsck` also checks the merges' conflict records.
  ///
  /// Building it also registers the hooks later layers give each other:
  /// queries reach the index daemon only through ``IndexPublisherLink``,
  /// which Query owns. Every store's open builds it first, so they are in
  /// place before any query.
  package static let layers: StoreWiring = {
    OrderIndexCache.register(IndexDaemonLink())
    return StoreWiring(
      gitDirectory: { try GitRepository.gitDirectory(workTree: $0) },
      recoverySteps: [ImportRecoveryStep(), CheckoutRecoveryStep()],
      observers: [OrderIndexObserver(), ObservationObserver(), EvictionIndexObserver()],
      checks: [ConflictRecordCheck()])
  }()
}
