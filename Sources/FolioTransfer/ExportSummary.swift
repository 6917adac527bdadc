import FolioSystem

/// What an export wrote.
public struct ExportSummary: Sendable {
  /// Rows written.
  public var rows = 0
  /// The document files left out because they do not parse, each an error
  /// at its `file:line:col` (see ``QueryCursor/skipped``); the other rows
  /// are written as if they were not there.
  public var skipped: [FolioError] = []
}
