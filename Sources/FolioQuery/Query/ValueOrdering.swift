import FolioJSON

/// The order in which queries sort documents and compare range values
/// (Firebase's rules).
///
/// **Values.** Missing or `null` < `false` < `true` < numbers < strings <
/// arrays and objects.
/// - Numbers compare numerically and exactly, whatever their size or
///   precision: `1` equals `1.0`, and `12345678901234567890` sorts before
///   `12345678901234567891`.
/// - Strings compare by UTF-16 code units, not by Swift's `<` (which uses
///   Unicode canonical equivalence) nor by code points: "😀" (U+1F600, the
///   surrogates D83D DE00) sorts *before* "～" (U+FF5E).
/// - Arrays and objects all compare equal to each other.
///
/// **Ties** are broken by pk. Pks that parse as 32-bit signed integers
/// (an optional `-`, then digits, within −2147483648…2147483647) sort
/// first, numerically; equal numbers put the shorter text first, so "1"
/// comes before "01". Every other pk follows, by UTF-16 code units.
///
/// ```swift
/// ValueOrdering.compare(.number("10"), .string("9"))   // -1: numbers before strings
/// ValueOrdering.comparePKs("2", "10")                  // -1: both integers
/// ValueOrdering.comparePKs("2147483648", "a")          // -1: both strings
/// ```
public enum ValueOrdering {
  /// Negative, zero or positive as `a` sorts before, with or after `b`
  /// (nil meaning a missing value, which sorts as `null`).
  public static func compare(_ a: JSONValue?, _ b: JSONValue?) -> Int {
    OrderValue(a).compare(OrderValue(b))
  }

  /// Negative, zero or positive as pk `a` sorts before, with or after pk `b`.
  public static func comparePKs(_ a: String, _ b: String) -> Int {
    switch (int32(a), int32(b)) {
    case (let x?, let y?):
      if x != y { return x < y ? -1 : 1 }
      let (m, n) = (a.utf8.count, b.utf8.count)
      if m != n { return m < n ? -1 : 1 }
      return compareUTF16(a, b)
    case (.some, nil): return -1
    case (nil, .some): return 1
    case (nil, nil): return compareUTF16(a, b)
    }
  }

  /// The value of a pk that is an optional `-` and digits within the 32-bit
  /// signed range; nil for any other pk.
  static func int32(_ pk: String) -> Int32? {
    pk.withUTF8Bytes { bytes -> Int32? in
      var i = 0
      var negative = false
      if bytes.count > 0 && bytes[0] == UInt8(ascii: "-") {
        negative = true
        i = 1
      }
      guard i < bytes.count else { return nil }
      var magnitude: Int64 = 0
      while i < bytes.count {
        let byte = bytes[i]
        guard byte >= 48 && byte <= 57 else { return nil }
        magnitude = magnitude * 10 + Int64(byte - 48)
        if magnitude > 2_147_483_648 { return nil }
        i += 1
      }
      return Int32(exactly: negative ? -magnitude : magnitude)
    }
  }

  /// Compares two strings by UTF-16 code units.
  ///
  /// UTF-8 byte order is code point order, and that differs from UTF-16
  /// order in one place only: a supplementary character (4 UTF-8 bytes,
  /// a surrogate pair D800–DFFF in UTF-16) against one in U+E000–U+FFFF
  /// (3 bytes starting EE or EF). So the bytes are compared, and that one
  /// case is turned around where the strings first differ.
  public static func compareUTF16(_ a: String, _ b: String) -> Int {
    a.withUTF8Bytes { x in
      b.withUTF8Bytes { y in
        let n = Swift.min(x.count, y.count)
        var i = 0
        while i < n && x[i] == y[i] { i += 1 }
        if i == n { return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1) }
        let (p, q) = (x[i], y[i])
        // Where the strings differ at a character's first byte, both bytes
        // are lead bytes (continuation bytes are 80–BF).
        if p >= 0xF0 && (q == 0xEE || q == 0xEF) { return -1 }
        if q >= 0xF0 && (p == 0xEE || p == 0xEF) { return 1 }
        return p < q ? -1 : 1
      }
    }
  }

  /// Whether two values are equal as `==` in a ``Predicate`` means it:
  /// numbers by value, strings by code units, arrays element by element,
  /// objects member by member (in any order); missing equals `null`.
  public static func equal(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
    switch (a ?? .null, b ?? .null) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.number(let x), .number(let y)):
      if x.utf8Equals(y) { return true }
      guard let p = ExactNumber(x), let q = ExactNumber(y) else { return false }
      return p.compare(q) == 0
    case (.string(let x), .string(let y)): return x.utf8Equals(y)
    case (.array(let x), .array(let y)):
      return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
    case (.object(let x), .object(let y)):
      return x.count == y.count
        && x.allSatisfy { member in y[member.key].map { equal(member.value, $0) } ?? false }
    default: return false
    }
  }
}
