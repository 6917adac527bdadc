extension Duration {
  /// Reads a duration written the way people write them on a command line:
  /// a number and a unit, `ms`, `s`, `m` or `h`, repeated if needed.
  ///
  /// ```swift
  /// try Duration(parsing: "5s")     // 5 seconds
  /// try Duration(parsing: "1h30m")  // 90 minutes
  /// try Duration(parsing: "250ms")
  /// ```
  /// - Throws: `USAGE` naming the text and showing valid examples, for text
  ///   that is empty, has no unit, an unknown unit, or adds up to zero.
  public init(parsing text: String) throws {
    func invalid(_ why: String) -> FolioError {
      FolioError(
        .usage, "invalid duration '\(text)': \(why); write a number and a unit, such as 500ms, 5s, 2m or 1h")
    }
    var total = Duration.zero
    var rest = Substring(text)
    if rest.isEmpty { throw invalid("it is empty") }
    while !rest.isEmpty {
      let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
      guard !number.isEmpty, let value = Double(number), value.isFinite else {
        throw invalid("expected a number at '\(rest)'")
      }
      rest = rest.dropFirst(number.count)
      let unit = rest.prefix { $0.isLetter }
      rest = rest.dropFirst(unit.count)
      let seconds: Double
      switch unit {
      case "ms": seconds = value / 1000
      case "s": seconds = value
      case "m": seconds = value * 60
      case "h": seconds = value * 3600
      case "": throw invalid("'\(number)' has no unit")
      default: throw invalid("unknown unit '\(unit)'")
      }
      total += .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
    if total <= .zero { throw invalid("it must be longer than zero") }
    self = total
  }

  /// The duration in seconds, as a `Double` (for deadlines on a monotonic clock).
  var seconds: Double {
    let (whole, attoseconds) = components
    return Double(whole) + Double(attoseconds) / 1e18
  }
}
