/// A JSON number literal reduced to sign, significant digits and decimal
/// exponent, so that any two literals compare exactly, whatever their size
/// or precision (`1`, `1.0` and `10e-1` are equal; `12345678901234567890`
/// and `12345678901234567891` are not).
package struct ExactNumber: Sendable, Hashable {
  /// -1, 0 or 1.
  package let sign: Int8
  /// The value is `0.d₁d₂d₃… × 10^exponent`: the position of the decimal
  /// point relative to the first significant digit.
  package let exponent: Int
  /// Significant digits (0–9), no leading or trailing zeros; empty for zero.
  package let digits: [UInt8]

  /// Parses a number literal by RFC 8259's grammar; nil if `text` is not one.
  package init?(_ text: String) {
    var parsed: ExactNumber?
    text.withUTF8Bytes { parsed = ExactNumber(bytes: $0) }
    guard let parsed else { return nil }
    self = parsed
  }

  private init(sign: Int8, exponent: Int, digits: [UInt8]) {
    self.sign = sign
    self.exponent = exponent
    self.digits = digits
  }

  private init?(bytes: UnsafeBufferPointer<UInt8>) {
    guard JSONValue.numberLiteralKind(bytes) != nil else { return nil }
    var i = 0
    let n = bytes.count
    var negative = false
    if bytes[0] == UInt8(ascii: "-") {
      negative = true
      i = 1
    }
    var digits: [UInt8] = []
    digits.reserveCapacity(n)
    // Count of digits before the decimal point, among the digits kept.
    var integerDigits = 0
    var seenNonZero = false
    var leadingFractionZeros = 0
    while i < n, bytes[i] >= 48, bytes[i] <= 57 {
      let d = bytes[i] - 48
      if d != 0 || seenNonZero {
        seenNonZero = true
        digits.append(d)
        integerDigits += 1
      }
      i += 1
    }
    if i < n, bytes[i] == UInt8(ascii: ".") {
      i += 1
      while i < n, bytes[i] >= 48, bytes[i] <= 57 {
        let d = bytes[i] - 48
        if d != 0 || seenNonZero {
          seenNonZero = true
          digits.append(d)
        } else {
          leadingFractionZeros += 1
        }
        i += 1
      }
    }
    var exponent = 0
    if i < n, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
      i += 1
      var negativeExponent = false
      if bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
        negativeExponent = bytes[i] == UInt8(ascii: "-")
        i += 1
      }
      // Saturate: an exponent past 10¹⁵ orders the same as one at it for
      // any literal short enough to fit in memory.
      while i < n {
        if exponent < 1_000_000_000_000_000 { exponent = exponent * 10 + Int(bytes[i] - 48) }
        i += 1
      }
      if negativeExponent { exponent = -exponent }
    }
    while digits.last == 0 { digits.removeLast() }
    if digits.isEmpty {
      self.init(sign: 0, exponent: 0, digits: [])
      return
    }
    let pointPosition = integerDigits > 0 ? integerDigits : -leadingFractionZeros
    self.init(sign: negative ? -1 : 1, exponent: pointPosition + exponent, digits: digits)
  }

  /// Negative, zero or positive as `self` is less than, equal to or greater
  /// than `other`, numerically.
  package func compare(_ other: ExactNumber) -> Int {
    if sign != other.sign { return sign < other.sign ? -1 : 1 }
    if sign == 0 { return 0 }
    let magnitude = compareMagnitude(other)
    return sign > 0 ? magnitude : -magnitude
  }

  private func compareMagnitude(_ other: ExactNumber) -> Int {
    if exponent != other.exponent { return exponent < other.exponent ? -1 : 1 }
    let n = Swift.min(digits.count, other.digits.count)
    for i in 0..<n where digits[i] != other.digits[i] {
      return digits[i] < other.digits[i] ? -1 : 1
    }
    return digits.count == other.digits.count ? 0 : (digits.count < other.digits.count ? -1 : 1)
  }
}
