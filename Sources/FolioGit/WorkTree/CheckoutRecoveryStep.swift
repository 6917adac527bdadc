import FolioCore
import FolioSystem

/// Finishes a checkout a crash interrupted, at open and before writes.
package struct CheckoutRecoveryStep: RecoveryStep {
  package init() {}

  package func isPending(in store: Store) -> Bool { FileSystem.exists(Checkout(store: store).journalPath) }
  package func recover(_ store: Store) throws { try Checkout(store: store).recoverCheckout() }
}
