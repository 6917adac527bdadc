/// How large a document may be: the `limits:` section of `folio.yaml`.
///
/// Every path that writes checks it before the durability point (`put`,
/// `apply`, the Swift API, import, `folio serve`, `folio watch`), and
/// `fsck` reports a document past it. The op-log line that records a
/// document may be twice its limit and 1 MiB more. The default is also the
/// most: 16 MiB is what a merge reads of a document from another replica,
/// so a store may lower the limit, never raise it.
///
/// ```yaml
/// limits:
///   document: 4M     # bytes, or with K or M; at most 16M
/// ```
public struct LimitsConfig: Sendable, Hashable {
  /// The default, and the largest allowed, document size in bytes.
  public static let maximumDocumentBytes = 16 << 20

  /// The largest document, in bytes of its canonical form.
  public var documentBytes: Int

  /// The longest op-log line: twice ``documentBytes`` and 1 MiB more, room
  /// for an op that sets every column of the largest document.
  public var opLineBytes: Int { documentBytes * 2 + (1 << 20) }

  /// Creates limits.
  public init(documentBytes: Int = LimitsConfig.maximumDocumentBytes) {
    self.documentBytes = documentBytes
  }
}
