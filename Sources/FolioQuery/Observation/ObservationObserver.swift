import FolioCore

/// Tells live queries of every commit.
package struct ObservationObserver: CommitObserver {
  package init() {}

  package func storeDidCommit(_ store: Store, writes: [Journal.Write]) {
    store.observation.didCommit(store: store, paths: writes.map(\.path))
  }
}
