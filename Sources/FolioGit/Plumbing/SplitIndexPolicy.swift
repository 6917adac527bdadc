import FolioCore

/// When Folio writes git's index split (``GitIndexFile+Split``), from the
/// repository's `core.splitIndex`, as git reads the same setting.
///
/// - `true`: always, as git then does.
/// - `false`: never; a split index is written whole at the next rewrite.
/// - unset: once the index has as many entries as
///   `FolioSettings.splitIndexMinimumEntries` (50,000), where a whole
///   rewrite costs far more than the change it records.
enum SplitIndexPolicy: Equatable {
  case automatic
  case always
  case never

  /// The policy `core.splitIndex`'s value gives (nil: unset). Git's
  /// spellings of a boolean are accepted; another value is left to the
  /// default.
  init(configValue: String?) {
    switch configValue?.lowercased() {
    case "true", "yes", "on", "1": self = .always
    case "false", "no", "off", "0": self = .never
    default: self = .automatic
    }
  }

  /// Whether an index of `count` entries is written split.
  func splits(count: Int) -> Bool {
    switch self {
    case .always: true
    case .never: false
    case .automatic: count >= FolioSettings.current.splitIndexMinimumEntries
    }
  }
}
