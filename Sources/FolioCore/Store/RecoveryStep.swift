/// Work a crash can leave half done in a later layer (a sync's checkout, an
/// import's landing), finished when the store next opens and before every
/// write, in the order ``StoreWiring`` lists the steps, before the store's
/// own journal.
package protocol RecoveryStep: Sendable {
  /// Whether there is anything to finish (cheap: a file's existence).
  func isPending(in store: Store) -> Bool
  /// Finishes it. Called with the store lock held.
  func recover(_ store: Store) throws
}
