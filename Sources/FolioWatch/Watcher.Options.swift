extension Watcher {
  /// How a ``Watcher`` batches saves and what its timers do.
  public struct Options: Sendable {
    /// How long a file must stay quiet before its save is read: one save
    /// makes several events, and this joins them into one mutation.
    public var debounce: Duration
    /// Commit this often (nil: never).
    public var commitEvery: Duration?
    /// Sync with ``remote`` this often (nil: never).
    public var syncEvery: Duration?
    /// The git remote the sync timer uses.
    public var remote: String
    /// Whether the sync timer pushes.
    public var push: Bool

    /// Creates options.
    public init(
      debounce: Duration = .milliseconds(50), commitEvery: Duration? = nil, syncEvery: Duration? = nil,
      remote: String = "origin", push: Bool = true
    ) {
      self.debounce = debounce
      self.commitEvery = commitEvery
      self.syncEvery = syncEvery
      self.remote = remote
      self.push = push
    }
  }
}
