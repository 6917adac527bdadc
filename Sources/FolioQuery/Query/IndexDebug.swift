import FolioSystem
import Glibc

/// One line on stderr per index check and daemon start, when the
/// environment sets `FOLIO_DEBUG_INDEX=1`: how a process learned that its
/// order indexes describe the files (tests and benchmarks observe the index
/// daemon this way).
package enum IndexDebug {
  /// Whether `FOLIO_DEBUG_INDEX` is set to something other than `0` or empty.
  static let isOn: Bool = {
    guard let value = getenv("FOLIO_DEBUG_INDEX") else { return false }
    let text = String(cString: value)
    return !text.isEmpty && text != "0"
  }()

  /// Writes `folio: index: MESSAGE` to stderr.
  package static func log(_ message: @autoclosure () -> String) {
    guard isOn else { return }
    FileSystem.writeBestEffort(STDERR_FILENO, Array(("folio: index: " + message() + "\n").utf8))
  }
}
