import FolioCore

extension Store {
  /// Live queries of this store, told of every commit.
  var observation: ObservationCenter { attachments.value(ObservationCenter.self) { ObservationCenter() } }
}

/// Tells live queries of every commit.
package struct ObservationObserver: CommitObserver {
  package init() {}

  package func storeDidCommit(_ store: Store, writes: [Journal.Write]) {
    store.observation.didCommit(store: store, paths: writes.map(\.path))
  }
}
