/// The composition root: the one place that knows every layer, and hands
/// the store the hooks of those above it.
extension StoreWiring {
  /// Folio's layers: git finds the work tree's folder; an import's landing
  /// and a sync's checkout are finished before the store's own journal;
  /// order indexes, then live queries, hear of each commit, and git's index
  /// of each landed write; `fsck` also checks the merges' conflict records.
  static let layers = StoreWiring(
    gitDirectory: { try GitRepository.gitDirectory(workTree: $0) },
    recoverySteps: [ImportRecoveryStep(), CheckoutRecoveryStep()],
    observers: [OrderIndexObserver(), ObservationObserver(), EvictionIndexObserver()],
    checks: [ConflictRecordCheck()])
}
