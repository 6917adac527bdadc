extension Store {
  /// Live queries of this store, told of every commit.
  var observation: ObservationCenter { attachments.value(ObservationCenter.self) { ObservationCenter() } }
}

/// Tells live queries of every commit.
struct ObservationObserver: CommitObserver {
  func storeDidCommit(_ store: Store, writes: [Journal.Write]) {
    store.observation.didCommit(store: store, paths: writes.map(\.path))
  }
}
