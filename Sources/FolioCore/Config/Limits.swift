import FolioSystem

/// Bounds on input Folio does not trust: what a fetch brings and what the
/// merge driver is handed. Past them the merge stops with `TOO_LARGE`
/// instead of spending unbounded memory or time. The README's "Security"
/// section lists them.
package enum Limits {
  /// The largest document a merge reads: 16 MiB of JSON, the most
  /// ``LimitsConfig`` allows a store.
  package static let maximumDocumentBytes = LimitsConfig.maximumDocumentBytes
  /// The longest op-log line a merge reads: 33 MiB (an op that sets every
  /// column of a document of the largest size, with room to spare).
  package static let maximumOpLineBytes = LimitsConfig().opLineBytes

  /// Throws `TOO_LARGE` when `count` bytes of `what` at `path` pass `limit`.
  package static func check(_ count: Int, limit: Int, what: String, path: String) throws {
    guard count > limit else { return }
    throw FolioError(
      .tooLarge,
      "\(what) is \(count) bytes, more than Folio's limit of \(limit) bytes (\(limit >> 20) MiB); "
        + "it was refused before anything was written",
      path: path)
  }
}
