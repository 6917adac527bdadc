import Synchronization

/// What a process tells the library that `folio.yaml` does not: the
/// `FOLIO_*` environment variables of the `folio` executable, read once
/// where the process starts and handed over with ``use(_:)``.
///
/// The library reads none of these variables itself (it hands the
/// environment on to the `git` it runs, and one test hook,
/// `FOLIO_TEST_PAUSE_AT`, is read where it acts). A process that never
/// calls ``use(_:)`` gets the defaults, so an app that embeds Folio behaves
/// the same whatever its users' shells export.
///
/// ```swift
/// FolioSettings.use(FolioSettings(environment: ProcessInfo.processInfo.environment))
/// ```
///
/// ## Topics
///
/// ### Reading and setting them
/// - ``init(environment:)``
/// - ``use(_:)``
/// - ``current``
public struct FolioSettings: Sendable, Equatable {
  /// How long a writer waits for the store lock, in seconds
  /// (`FOLIO_LOCK_TIMEOUT`; 10).
  public var lockTimeout: Double = 10
  /// The layout of every table: of a table `folio.yaml` names without one,
  /// and of a table the command line makes (`FOLIO_TABLE_LAYOUT`; nil: flat
  /// for the first, nested for the second, see ``TableLayout``). Test
  /// suites set it to run again over another layout.
  public var tableLayout: TableLayout?
  /// An ssh key file that fetches and pushes offer after the agent, over
  /// `ssh-key` in `folio.yaml` (`FOLIO_SSH_KEY`).
  public var sshKey: String?
  /// Whether queries start an index daemon on demand, over `index.daemon`
  /// in `folio.yaml` (`FOLIO_INDEX_DAEMON`: `auto` or `off`).
  public var indexDaemon: IndexConfig.DaemonMode?
  /// How many documents make a full check worth a daemon
  /// (`FOLIO_INDEX_DAEMON_MIN_DOCUMENTS`; 20,000).
  public var indexDaemonMinimumDocuments = 20_000
  /// How many entries git's index has before Folio writes it split, when
  /// the repository's `core.splitIndex` is unset
  /// (`FOLIO_SPLIT_INDEX_MIN_ENTRIES`; 50,000). Test suites set 0 to run
  /// again over split indexes.
  public var splitIndexMinimumEntries = 50_000
  /// Whether each index check writes how it was made to stderr
  /// (`FOLIO_DEBUG_INDEX=1`).
  public var debugIndex = false
  /// The home folder, for an ssh key named `~/…` in `folio.yaml` (`HOME`).
  public var home: String?

  /// The defaults.
  public init() {}

  /// The settings `environment` sets; a variable that is absent, empty or
  /// not understood leaves its default.
  public init(environment: [String: String]) {
    if let text = environment["FOLIO_LOCK_TIMEOUT"], let value = Double(text), value >= 0 {
      lockTimeout = value
    }
    tableLayout = environment["FOLIO_TABLE_LAYOUT"].flatMap(TableLayout.init(rawValue:))
    if let key = environment["FOLIO_SSH_KEY"], !key.isEmpty { sshKey = key }
    switch environment["FOLIO_INDEX_DAEMON"]?.lowercased() {
    case "off", "0", "false", "no", "never": indexDaemon = .off
    case "auto", "on", "1", "true", "yes": indexDaemon = .auto
    default: break
    }
    if let text = environment["FOLIO_INDEX_DAEMON_MIN_DOCUMENTS"], let value = Int(text) {
      indexDaemonMinimumDocuments = value
    }
    if let text = environment["FOLIO_SPLIT_INDEX_MIN_ENTRIES"], let value = Int(text), value >= 0 {
      splitIndexMinimumEntries = value
    }
    if let text = environment["FOLIO_DEBUG_INDEX"] { debugIndex = !text.isEmpty && text != "0" }
    home = environment["HOME"]
  }

  /// The names ``init(environment:)`` reads.
  public static let variableNames = [
    "FOLIO_LOCK_TIMEOUT", "FOLIO_TABLE_LAYOUT", "FOLIO_SSH_KEY", "FOLIO_INDEX_DAEMON",
    "FOLIO_INDEX_DAEMON_MIN_DOCUMENTS", "FOLIO_SPLIT_INDEX_MIN_ENTRIES", "FOLIO_DEBUG_INDEX", "HOME",
  ]

  private static let shared = Mutex(FolioSettings())

  /// The settings in force in this process.
  public static var current: FolioSettings { shared.withLock { $0 } }

  /// Puts `settings` in force in this process, for what it does from now
  /// on. Call it once, before opening a store.
  public static func use(_ settings: FolioSettings) {
    shared.withLock { $0 = settings }
  }
}
