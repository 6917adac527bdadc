import FolioJSON

/// A hybrid logical clock stamp: wall milliseconds, a counter for stamps in
/// the same millisecond, and the replica that made it. Stamps order ops
/// totally across replicas.
///
/// Its text form, `WWWWWWWWWWWWW-CCCC-replica`, sorts the same way as the
/// stamps do.
public struct HLC: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// Milliseconds since the Unix epoch (0 for "default" writes that any
  /// other write beats).
  public var wall: Int64
  /// Orders stamps within one millisecond.
  public var counter: Int
  /// The replica id.
  public var replica: String

  /// The largest counter before the clock borrows a millisecond, so the text
  /// form stays fixed-width.
  static let maximumCounter = 9999
  /// The largest wall time the text form holds (13 digits, the year 2286).
  static let maximumWall: Int64 = 9_999_999_999_999

  /// Creates a stamp.
  public init(wall: Int64, counter: Int, replica: String) {
    self.wall = wall
    self.counter = counter
    self.replica = replica
  }

  /// Parses the text form: 13 digits, `-`, 4 digits, `-`, the replica.
  public init?(_ text: String) {
    // By bytes: every op line's stamp is parsed, and splitting the string
    // cost more than the rest of the op.
    let parsed = text.withUTF8Bytes { bytes -> (Int64, Int)? in
      guard bytes.count > 19, bytes[13] == UInt8(ascii: "-"), bytes[18] == UInt8(ascii: "-") else {
        return nil
      }
      var wall: Int64 = 0
      for i in 0..<13 {
        let digit = bytes[i] &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        wall = wall * 10 + Int64(digit)
      }
      var counter = 0
      for i in 14..<18 {
        let digit = bytes[i] &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        counter = counter * 10 + Int(digit)
      }
      return (wall, counter)
    }
    guard let (wall, counter) = parsed else { return nil }
    let replica = text.utf8.dropFirst(19)
    self.init(wall: wall, counter: counter, replica: String(Substring(replica)))
  }

  /// The text form.
  public var description: String {
    if wall >= 0 && counter >= 0 {
      var bytes: [UInt8] = []
      bytes.reserveCapacity(19 + replica.utf8.count)
      appendText(to: &bytes)
      return String(decoding: bytes, as: UTF8.self)
    }
    let w = String(wall)
    let c = String(counter)
    return String(repeating: "0", count: max(0, 13 - w.count)) + w + "-"
      + String(repeating: "0", count: max(0, 4 - c.count)) + c + "-" + replica
  }

  /// Appends the text form's UTF-8 bytes to `bytes`, as ``description``
  /// spells it, without building the string (an import stamps 300k ops).
  func appendText(to bytes: inout [UInt8]) {
    guard wall >= 0, counter >= 0 else {
      bytes += description.utf8
      return
    }
    Self.appendDecimal(UInt64(wall), width: 13, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    Self.appendDecimal(UInt64(counter), width: 4, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    bytes += replica.utf8
  }

  /// `value` in decimal, zero-padded on the left to `width` digits.
  private static func appendDecimal(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
    var digits = 1
    var rest = value / 10
    while rest > 0 {
      digits += 1
      rest /= 10
    }
    let start = bytes.count
    let total = max(digits, width)
    bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: total))
    var v = value
    var k = start + total - 1
    repeat {
      bytes[k] = UInt8(ascii: "0") + UInt8(v % 10)
      v /= 10
      k -= 1
    } while v > 0
  }

  /// Order by wall time, then counter, then replica id.
  public static func < (lhs: HLC, rhs: HLC) -> Bool {
    if lhs.wall != rhs.wall { return lhs.wall < rhs.wall }
    if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
    return Array(lhs.replica.utf8).lexicographicallyPrecedes(rhs.replica.utf8)
  }

  /// The next stamp after `last` on `replica`, at wall time `now`: never
  /// earlier than `last`, even if the wall clock went back, and never past
  /// what the text form holds (callers keep `last` within the clock bound,
  /// so that limit is only a guard).
  package static func next(after last: HLC?, now: Int64, replica: String) -> HLC {
    guard let last, last.wall >= now else {
      return HLC(wall: min(max(now, 0), maximumWall), counter: 0, replica: replica)
    }
    if last.counter < maximumCounter {
      return HLC(wall: last.wall, counter: last.counter + 1, replica: replica)
    }
    return HLC(wall: min(last.wall + 1, maximumWall), counter: 0, replica: replica)
  }
}
