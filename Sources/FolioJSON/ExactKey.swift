/// A string that hashes and compares by its exact UTF-8 bytes: the one key
/// type for sets and dictionaries of pks and of JSON object keys.
///
/// A plain `String` key would merge "é" (U+00E9) and "e\u{301}", or two
/// strings that differ only in a zero-width joiner, because Swift's `==` is
/// canonical equivalence. They are two different file names, two different
/// JSON keys and two different Firebase keys (issue 13).
///
/// ```swift
/// var pks = Set<ExactKey>()
/// pks.insert(ExactKey("\u{E9}"))
/// pks.insert(ExactKey("e\u{301}"))
/// pks.count  // 2
/// ```
public struct ExactKey: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The key.
  public let string: String

  /// Wraps `string`.
  public init(_ string: String) { self.string = string }

  /// Whether the two keys have the same bytes.
  public static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
    lhs.string.utf8Equals(rhs.string)
  }

  /// Byte order, which is Unicode code point order.
  public static func < (lhs: ExactKey, rhs: ExactKey) -> Bool {
    lhs.string.utf8Compare(rhs.string) < 0
  }

  /// Hashes the exact bytes, so the hash agrees with `==`.
  public func hash(into hasher: inout Hasher) {
    string.hashUTF8(into: &hasher)
  }

  /// The key itself.
  public var description: String { string }
}

extension ExactKey: ExpressibleByStringLiteral {
  /// A key from a literal.
  public init(stringLiteral value: String) { self.init(value) }
}

extension Set where Element == ExactKey {
  /// The exact keys of `strings`.
  init<S: Sequence>(exact strings: S) where S.Element == String {
    self.init(strings.lazy.map { ExactKey($0) })
  }

  /// Whether the set holds `string`'s exact bytes.
  package func contains(exact string: String) -> Bool { contains(ExactKey(string)) }
}
