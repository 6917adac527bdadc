/// How a store keeps in step with its remote on its own: the `sync:` section
/// of `folio.yaml`.
///
/// While any ``Subscription`` is alive, the store pulls from ``remote``
/// every ``pullEvery`` (Ditto's `findByID` API: a subscription is how an app asks to
/// receive other replicas' changes). A pull is ``Store/sync(remote:push:)-(String?,_)``
/// without the push: it commits pending local changes, fetches and merges.
///
/// ```yaml
/// sync:
///   remote: origin      # default: origin
///   pull-every: 30s     # default: 30s; "off" never pulls on its own
///   ssh-key: ~/.ssh/id_ed25519   # optional; FOLIO_SSH_KEY overrides it
///   max-clock-skew: 24h # default: 24h; ops stamped further ahead are refused
/// ```
public struct SyncConfig: Sendable, Hashable {
  /// The default pull interval.
  public static let defaultPullInterval = Duration.seconds(30)
  /// The default bound on how far ahead of local time a fetched op may be
  /// stamped.
  public static let defaultMaxClockSkew = Duration.seconds(24 * 3600)

  /// How far ahead of local time an op from another replica may be stamped.
  /// A sync refuses an op stamped later (`CLOCK_SKEW`): it would beat every
  /// edit made until then, and move this replica's clock with it. The local
  /// clock never runs further ahead of real time than this either.
  public var maxClockSkew: Duration = SyncConfig.defaultMaxClockSkew

  /// The git remote to pull from.
  public var remote: String
  /// How often to pull while a subscription is alive; nil never pulls.
  /// What is written in `folio.yaml`; the pulls keep to
  /// ``effectivePullInterval``.
  public var pullEvery: Duration?

  /// The shortest time between two automatic pulls, whatever `pull-every`
  /// says: a `folio.yaml` may arrive from a remote, and `pull-every: 1ms`
  /// would make every subscriber fetch a thousand times a second.
  public static let minimumPullInterval: Duration = .seconds(1)

  /// ``pullEvery``, at least ``minimumPullInterval``; nil never pulls.
  public var effectivePullInterval: Duration? {
    pullEvery.map { Swift.max($0, Self.minimumPullInterval) }
  }
  /// Whether the file named the section, or the defaults apply. With the
  /// defaults, a store whose repository has no such remote simply does not
  /// pull; a remote named in the file must exist.
  public var isExplicit: Bool

  /// The ssh private key for remotes reached over ssh, as written in the
  /// file: `~` or `~/…` for the home folder, else absolute or relative to
  /// the store root (see ``sshKeyPath(root:settings:)``). Its public key
  /// is the same path plus `.pub`.
  public var sshKey: String?

  /// Creates sync settings.
  public init(
    remote: String = "origin", pullEvery: Duration? = SyncConfig.defaultPullInterval, sshKey: String? = nil
  ) {
    self.remote = remote
    self.pullEvery = pullEvery
    self.sshKey = sshKey
    self.isExplicit = remote != "origin" || pullEvery != SyncConfig.defaultPullInterval || sshKey != nil
  }

  /// The ssh key file to offer after the ssh agent: the process's
  /// (``FolioSettings/sshKey``, from `FOLIO_SSH_KEY`) when set, since it
  /// overrides the file, else ``sshKey`` with `~` expanded to the home
  /// folder and a relative path taken from `root`.
  /// - Parameters:
  ///   - root: the store root.
  ///   - settings: the process's settings.
  /// - Returns: an absolute path, or nil when neither names a key.
  public func sshKeyPath(root: String, settings: FolioSettings) -> String? {
    if let key = settings.sshKey, !key.isEmpty { return key }
    guard let sshKey else { return nil }
    if sshKey == "~" || sshKey.hasPrefix("~/") {
      let home = settings.home ?? "/"
      let trimmed = home.hasSuffix("/") && home.count > 1 ? String(home.dropLast()) : home
      return trimmed + sshKey.dropFirst()
    }
    if sshKey.hasPrefix("/") { return sshKey }
    return (root.hasSuffix("/") ? String(root.dropLast()) : root) + "/" + sshKey
  }
}
