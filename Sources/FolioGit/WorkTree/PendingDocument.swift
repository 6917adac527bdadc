import FolioCore
import FolioJSON

/// One document file that differs from HEAD.
package struct PendingDocument {
  package var table: TableConfig
  package var pk: String
  /// Relative to the root.
  package var path: String
  /// The file's bytes, or nil when it was deleted.
  package var bytes: [UInt8]?
  /// The parsed file, or nil when deleted.
  package var document: JSONObject?
  /// The change no op explains, if any.
  package var synthetic: Mutation?
  /// Whether `synthetic` is a new document recorded compactly, as an import
  /// does (``Op/fromTree``): the body is in the commit, not in the log.
  package var syntheticFromTree = false
}
