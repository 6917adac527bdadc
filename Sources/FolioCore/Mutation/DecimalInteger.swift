/// A signed integer of any size, for `increment` (the transform rules: "by is a
/// signed integer, either a number or a decimal string", of any size).
///
/// Stored as base-10⁹ limbs, least significant first, so that parsing and
/// printing decimal text is cheap and addition is exact.
public struct DecimalInteger: Sendable, Hashable, CustomStringConvertible {
  private static let base: UInt32 = 1_000_000_000
  /// Least significant limb first; no trailing zero limbs; empty means zero.
  private var limbs: [UInt32]
  private var negative: Bool

  /// Zero.
  public static let zero = DecimalInteger(limbs: [], negative: false)

  private init(limbs: [UInt32], negative: Bool) {
    var limbs = limbs
    while limbs.last == 0 { limbs.removeLast() }
    self.limbs = limbs
    self.negative = limbs.isEmpty ? false : negative
  }

  /// A value from a machine integer.
  public init(_ value: Int) {
    var magnitude = value.magnitude
    var limbs: [UInt32] = []
    while magnitude > 0 {
      limbs.append(UInt32(magnitude % UInt(Self.base)))
      magnitude /= UInt(Self.base)
    }
    self.init(limbs: limbs, negative: value < 0)
  }

  /// Parses `-?[0-9]+`. Returns nil for anything else (no `+`, no spaces,
  /// no fraction or exponent).
  public init?(_ text: some StringProtocol) {
    var utf8 = Substring(text).utf8[...]
    var negative = false
    if utf8.first == UInt8(ascii: "-") {
      negative = true
      utf8 = utf8.dropFirst()
    }
    guard !utf8.isEmpty, utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
    let digits = Array(utf8)
    var limbs: [UInt32] = []
    var end = digits.count
    while end > 0 {
      let start = max(0, end - 9)
      var limb: UInt32 = 0
      for d in digits[start..<end] { limb = limb * 10 + UInt32(d - 48) }
      limbs.append(limb)
      end = start
    }
    self.init(limbs: limbs, negative: negative)
  }

  /// Whether this is zero.
  public var isZero: Bool { limbs.isEmpty }

  /// The value as an `Int32`, if it fits.
  public var int32Value: Int32? {
    guard limbs.count <= 2 else { return nil }
    var magnitude: Int64 = 0
    for limb in limbs.reversed() { magnitude = magnitude * Int64(Self.base) + Int64(limb) }
    let value = negative ? -magnitude : magnitude
    return Int32(exactly: value)
  }

  /// Shortest decimal text: no leading zeros, `-` only when negative.
  public var description: String {
    guard let top = limbs.last else { return "0" }
    var text = negative ? "-" : ""
    text += String(top)
    for limb in limbs.dropLast().reversed() {
      let digits = String(limb)
      text += String(repeating: "0", count: 9 - digits.count) + digits
    }
    return text
  }

  /// The sum of two values.
  public static func + (lhs: DecimalInteger, rhs: DecimalInteger) -> DecimalInteger {
    if lhs.negative == rhs.negative {
      return DecimalInteger(limbs: addMagnitudes(lhs.limbs, rhs.limbs), negative: lhs.negative)
    }
    // Opposite signs: subtract the smaller magnitude from the larger.
    if compareMagnitudes(lhs.limbs, rhs.limbs) >= 0 {
      return DecimalInteger(limbs: subtractMagnitudes(lhs.limbs, rhs.limbs), negative: lhs.negative)
    }
    return DecimalInteger(limbs: subtractMagnitudes(rhs.limbs, lhs.limbs), negative: rhs.negative)
  }

  /// The difference of two values.
  public static func - (lhs: DecimalInteger, rhs: DecimalInteger) -> DecimalInteger {
    lhs + (-rhs)
  }

  /// The negation.
  public static prefix func - (value: DecimalInteger) -> DecimalInteger {
    DecimalInteger(limbs: value.limbs, negative: !value.negative)
  }

  private static func compareMagnitudes(_ a: [UInt32], _ b: [UInt32]) -> Int {
    if a.count != b.count { return a.count < b.count ? -1 : 1 }
    for i in stride(from: a.count - 1, through: 0, by: -1) where a[i] != b[i] {
      return a[i] < b[i] ? -1 : 1
    }
    return 0
  }

  private static func addMagnitudes(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
    var result: [UInt32] = []
    result.reserveCapacity(max(a.count, b.count) + 1)
    var carry: UInt32 = 0
    for i in 0..<max(a.count, b.count) {
      let sum = (i < a.count ? a[i] : 0) + (i < b.count ? b[i] : 0) + carry
      result.append(sum % base)
      carry = sum / base
    }
    if carry > 0 { result.append(carry) }
    return result
  }

  /// `a - b` where `|a| >= |b|`.
  private static func subtractMagnitudes(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
    var result: [UInt32] = []
    result.reserveCapacity(a.count)
    var borrow: Int64 = 0
    for i in 0..<a.count {
      var difference = Int64(a[i]) - (i < b.count ? Int64(b[i]) : 0) - borrow
      if difference < 0 {
        difference += Int64(base)
        borrow = 1
      } else {
        borrow = 0
      }
      result.append(UInt32(difference))
    }
    return result
  }
}

extension DecimalInteger: Comparable {
  /// Numeric order.
  public static func < (lhs: DecimalInteger, rhs: DecimalInteger) -> Bool {
    if lhs.negative != rhs.negative { return lhs.negative }
    let c = compareMagnitudes(lhs.limbs, rhs.limbs)
    return lhs.negative ? c > 0 : c < 0
  }
}
