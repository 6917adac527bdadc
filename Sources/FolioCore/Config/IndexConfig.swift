/// How fresh processes get the order indexes vouched for: the `index:`
/// section of `folio.yaml`.
///
/// With `daemon: auto` (the default), a `folio query` or `folio export`
/// that finds no ``IndexPublisher`` for the store, and so has to take a stat
/// of every document file, starts `folio index-daemon` in the background;
/// later queries then skip that check. The daemon exits after ``idle``
/// without a question. The environment variable `FOLIO_INDEX_DAEMON`
/// (`auto` or `off`), when set, takes precedence over this file.
///
/// ```yaml
/// index:
///   daemon: auto      # or off: never start one on demand
///   idle: 30m         # how long a daemon waits for a question before it exits
/// ```
public struct IndexConfig: Sendable, Hashable {
  /// Whether queries start an index daemon on demand.
  public enum DaemonMode: String, Sendable, Hashable, CaseIterable {
    /// Start one when a query finds none.
    case auto
    /// Never start one on demand (`folio index-daemon` still runs one).
    case off
  }

  /// The default idle timeout of a daemon.
  public static let defaultIdle = Duration.seconds(30 * 60)

  /// Whether queries start a daemon on demand.
  public var daemon: DaemonMode
  /// How long a daemon waits for a question before it exits.
  public var idle: Duration

  /// Creates index settings.
  public init(daemon: DaemonMode = .auto, idle: Duration = IndexConfig.defaultIdle) {
    self.daemon = daemon
    self.idle = idle
  }
}
