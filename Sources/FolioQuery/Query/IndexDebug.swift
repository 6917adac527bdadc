import FolioCore
import FolioSystem
import Glibc

/// One line on stderr per index check and daemon start, when the process's
/// settings ask for it (``FolioSettings/debugIndex``, `FOLIO_DEBUG_INDEX=1`
/// for `folio`): how a process learned that its order indexes describe the
/// files (tests and benchmarks observe the index daemon this way).
package enum IndexDebug {
  /// Whether the process's settings ask for the lines.
  static var isOn: Bool { FolioSettings.current.debugIndex }

  /// Writes `folio: index: MESSAGE` to stderr.
  package static func log(_ message: @autoclosure () -> String) {
    guard isOn else { return }
    FileSystem.writeBestEffort(STDERR_FILENO, Array(("folio: index: " + message() + "\n").utf8))
  }
}
