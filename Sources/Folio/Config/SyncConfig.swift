/// How a store keeps in step with its remote on its own: the `sync:` section
/// of `folio.yaml`.
///
/// While any ``Subscription`` is alive, the store pulls from ``remote``
/// every ``pullEvery`` (seed `000_*`: a subscription is how an app asks to
/// receive other replicas' changes). A pull is ``Store/sync(remote:push:)``
/// without the push: it commits pending local changes, fetches and merges.
///
/// ```yaml
/// sync:
///   remote: origin      # default: origin
///   pull-every: 30s     # default: 30s; "off" never pulls on its own
/// ```
public struct SyncConfig: Sendable, Hashable {
  /// The default pull interval.
  public static let defaultPullInterval = Duration.seconds(30)

  /// The git remote to pull from.
  public var remote: String
  /// How often to pull while a subscription is alive; nil never pulls.
  public var pullEvery: Duration?
  /// Whether the file named the section, or the defaults apply. With the
  /// defaults, a store whose repository has no such remote simply does not
  /// pull; a remote named in the file must exist.
  public var isExplicit: Bool

  /// Creates sync settings.
  public init(remote: String = "origin", pullEvery: Duration? = SyncConfig.defaultPullInterval) {
    self.remote = remote
    self.pullEvery = pullEvery
    self.isExplicit = remote != "origin" || pullEvery != SyncConfig.defaultPullInterval
  }
}
