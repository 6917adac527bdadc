import FolioCore

extension Store {
  /// Live subscriptions (Ditto's `subscribe`), consulted by `sync`.
  /// The first use wires them to the puller.
  var subscriptions: SubscriptionRegistry {
    attachments.value(SubscriptionRegistry.self) {
      let registry = SubscriptionRegistry()
      registry.onActivityChange { [weak self] active in self?.subscriptionsChanged(active: active) }
      return registry
    }
  }

  /// Pulls from the remote while any subscription is alive.
  var puller: SubscriptionPuller { attachments.value(SubscriptionPuller.self) { SubscriptionPuller() } }
}
