/// `format: date-time`: RFC 3339's `date-time` production, as JSON Schema
/// defines the format.
///
/// `1985-04-12T23:20:50.52Z` and `1996-12-19T16:39:57-08:00` pass; `T` and
/// `Z` may be lower case; the day must exist in its month (leap years
/// counted); a second of 60 (a leap second) is only 23:59:60 in UTC, once
/// the offset is applied. ISO 8601's other forms (week dates, no seconds, a
/// bare `+01` offset) fail.
enum DateTimeFormat {
  /// Whether `text` is an RFC 3339 date-time.
  static func isValid(_ text: String) -> Bool {
    let b = Array(text.utf8)
    // yyyy-mm-ddThh:mm:ss, then an optional fraction, then Z or ±hh:mm.
    guard b.count >= 20 else { return false }
    func digits(_ at: Int, _ count: Int) -> Int? {
      guard at + count <= b.count else { return nil }
      var value = 0
      for k in at..<(at + count) {
        guard b[k] >= 48 && b[k] <= 57 else { return nil }
        value = value * 10 + Int(b[k] - 48)
      }
      return value
    }
    guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"), let month = digits(5, 2),
      b[7] == UInt8(ascii: "-"), let day = digits(8, 2), b[10] | 0x20 == UInt8(ascii: "t"),
      let hour = digits(11, 2), b[13] == UInt8(ascii: ":"), let minute = digits(14, 2),
      b[16] == UInt8(ascii: ":"), let second = digits(17, 2)
    else { return false }
    guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour <= 23,
      minute <= 59, second <= 60
    else { return false }
    var i = 19
    if b[i] == UInt8(ascii: ".") {
      i += 1
      let start = i
      while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
      guard i > start else { return false }
    }
    guard i < b.count else { return false }
    var offsetMinutes = 0
    if b[i] | 0x20 == UInt8(ascii: "z") {
      i += 1
    } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
      guard let offsetHour = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"),
        let offsetMinute = digits(i + 4, 2), offsetHour <= 23, offsetMinute <= 59
      else { return false }
      offsetMinutes = (offsetHour * 60 + offsetMinute) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
      i += 6
    } else {
      return false
    }
    guard i == b.count else { return false }
    if second == 60 {
      // A leap second is inserted at the end of a UTC day: 23:59:60Z.
      let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
      return utc == 23 * 60 + 59
    }
    return true
  }

  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }
}
