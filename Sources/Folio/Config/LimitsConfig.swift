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

  /// `1048576`, `512K` or `16M` in bytes (powers of 1024); nil for
  /// anything else.
  static func parseSize(_ text: String) -> Int? {
    let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20]
    if let last = text.uppercased().last, let unit = units[last] {
      return Int(text.dropLast()).flatMap { $0 > 0 && $0 <= Int.max / unit ? $0 * unit : nil }
    }
    return Int(text).flatMap { $0 > 0 ? $0 : nil }
  }

  /// `16M`, `512K` or a byte count, as `parseSize` reads it back.
  static func format(_ bytes: Int) -> String {
    if bytes % (1 << 20) == 0 { return "\(bytes >> 20)M" }
    if bytes % (1 << 10) == 0 { return "\(bytes >> 10)K" }
    return "\(bytes)"
  }
}
