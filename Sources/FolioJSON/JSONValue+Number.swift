extension JSONValue {
  /// Whether `text` is a number as RFC 8259 §6 writes it:
  /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
  ///
  /// ```swift
  /// JSONValue.isValidNumberLiteral("1.50e+3")  // true
  /// JSONValue.isValidNumberLiteral("01")       // false
  /// JSONValue.isValidNumberLiteral("NaN")      // false
  /// ```
  public static func isValidNumberLiteral(_ text: String) -> Bool {
    text.withUTF8Bytes { numberLiteralKind($0) != nil }
  }

  /// Whether this is a number written as an integer: an optional `-` and
  /// digits, with no fraction and no exponent (`-12`, `0`; not `1.0`, `1e3`).
  ///
  /// Any other kind of value is not an integer literal.
  public var isIntegerLiteral: Bool {
    guard case .number(let text) = self else { return false }
    return text.withUTF8Bytes { Self.numberLiteralKind($0) == .integer }
  }

  /// The two shapes of a valid number literal.
  enum NumberLiteralKind {
    /// Digits only, after an optional minus sign.
    case integer
    /// With a fraction, an exponent or both.
    case real
  }

  /// What kind of number literal `bytes` is, or `nil` if it is not one.
  static func numberLiteralKind(_ bytes: UnsafeBufferPointer<UInt8>) -> NumberLiteralKind? {
    let n = bytes.count
    var i = 0
    func digit(_ k: Int) -> Bool {
      k < n && bytes[k] >= UInt8(ascii: "0") && bytes[k] <= UInt8(ascii: "9")
    }
    func skipDigits() { while digit(i) { i += 1 } }

    if i < n && bytes[i] == UInt8(ascii: "-") { i += 1 }
    guard digit(i) else { return nil }
    if bytes[i] == UInt8(ascii: "0") {
      i += 1
    } else {
      skipDigits()
    }
    var kind = NumberLiteralKind.integer
    if i < n && bytes[i] == UInt8(ascii: ".") {
      i += 1
      guard digit(i) else { return nil }
      skipDigits()
      kind = .real
    }
    if i < n && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
      i += 1
      if i < n && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
      guard digit(i) else { return nil }
      skipDigits()
      kind = .real
    }
    return i == n ? kind : nil
  }
}
