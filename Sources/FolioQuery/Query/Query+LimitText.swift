import FolioJSON

extension Query {
  /// A limit as Firebase's clients accept it, written as text (a URL
  /// parameter or a command-line argument): any JSON number with a whole
  /// value, so `20`, `20.0` and `2e1` are all twenty. A count past `Int`'s
  /// range is `Int.max`, which no table reaches.
  ///
  /// - Returns: the count, or nil when `text` is not a whole, non-negative
  ///   JSON number (so `-1`, `2.5`, `0x10` and `ten` are nil).
  public static func limitCount(_ text: String) -> Int? {
    guard let number = ExactNumber(text), number.sign >= 0 else { return nil }
    if number.sign == 0 { return 0 }
    // 0.d₁d₂… × 10^exponent is whole when every digit is left of the point.
    guard number.digits.count <= number.exponent else { return nil }
    guard number.exponent <= 18 else { return Int.max }
    var value = 0
    for position in 0..<number.exponent {
      let digit = position < number.digits.count ? Int(number.digits[position]) : 0
      let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
      if overflow { return Int.max }
      let (sum, carry) = shifted.addingReportingOverflow(digit)
      if carry { return Int.max }
      value = sum
    }
    return value
  }
}
