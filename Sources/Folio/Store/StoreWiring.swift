/// What the layers above the store give it: how to find the git folder,
/// the recovery steps to run at open, the observers of every commit, and
/// the checks `folio fsck` adds.
///
/// The store learns of later layers only through this value, which the
/// composition root (`Sources/Folio/StoreWiring+Layers.swift`) fills in, so
/// nothing in `Store/` names a type from `Git/`, `Query/`, `Observation/`,
/// `Transfer/` or `Watch/` (a test keeps that true).
struct StoreWiring: Sendable {
  /// The git folder of a work tree, or nil when it is not one.
  var gitDirectory: @Sendable (_ workTree: String) throws -> String?
  /// Finished at open and before every write, in this order.
  var recoverySteps: [any RecoveryStep]
  /// Told of every commit, in this order.
  var observers: [any CommitObserver]
  /// Run by ``Store/check()`` after its own checks, in this order.
  var checks: [any StoreCheck] = []
}

extension Store {
  /// The later layers, as the composition root wires them.
  static let wiring = StoreWiring.layers
}
