/// What the layers above the store give it: how to find the git folder,
/// the recovery steps to run at open, the observers of every commit, and
/// the checks `folio fsck` adds.
///
/// The store learns of later layers only through this value, which the
/// composition root (`Sources/Folio/StoreWiring+Layers.swift`) fills in and
/// hands to every store it opens. `FolioCore` cannot import the targets
/// above it, so the compiler keeps `Store/` from naming their types.
package struct StoreWiring: Sendable {
  /// The git folder of a work tree, or nil when it is not one.
  package var gitDirectory: @Sendable (_ workTree: String) throws -> String?
  /// Finished at open and before every write, in this order.
  package var recoverySteps: [any RecoveryStep]
  /// Told of every commit, in this order.
  package var observers: [any CommitObserver]
  /// Run by ``Store/check()`` after its own checks, in this order.
  package var checks: [any StoreCheck]

  package init(
    gitDirectory: @escaping @Sendable (_ workTree: String) throws -> String?,
    recoverySteps: [any RecoveryStep],
    observers: [any CommitObserver], checks: [any StoreCheck] = []
  ) {
    self.gitDirectory = gitDirectory
    self.recoverySteps = recoverySteps
    self.observers = observers
    self.checks = checks
  }
}
