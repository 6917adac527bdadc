/// A size in bytes as people write it in options and `folio.yaml`:
/// `1048576`, `512K`, `16M` or `1G` (powers of 1024, either case).
///
/// ```swift
/// ByteSize.parse("16M")  // 16_777_216
/// ByteSize.format(16 << 20)  // "16M"
/// ```
public enum ByteSize {
  /// The size `text` names, if it is a positive one that fits an `Int`.
  public static func parse(_ text: String) -> Int? {
    let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
    if let last = text.uppercased().last, let unit = units[last] {
      return Int(text.dropLast()).flatMap {
        $0 <= 0 || $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit
      }
    }
    return Int(text).flatMap { $0 > 0 ? $0 : nil }
  }

  /// `bytes` in the largest unit that divides it, as ``parse(_:)`` reads
  /// it back: `16M`, `512K` or a byte count.
  public static func format(_ bytes: Int) -> String {
    if bytes % (1 << 20) == 0 { return "\(bytes >> 20)M" }
    if bytes % (1 << 10) == 0 { return "\(bytes >> 10)K" }
    return "\(bytes)"
  }
}
