/// Reads durations written the way people write them on a command line and
/// in `folio.yaml`: a number and a unit, `ms`, `s`, `m` or `h`, repeated if
/// needed.
///
/// ```swift
/// try DurationParser.parse("5s")     // 5 seconds
/// try DurationParser.parse("1h30m")  // 90 minutes
/// try DurationParser.parse("250ms")
/// ```
public enum DurationParser {
  /// The longest duration accepted: a year. Anything longer is a typo, and
  /// converting it to nanoseconds could overflow.
  public static let maximum = Duration.seconds(365 * 24 * 3600)

  /// Parses `text`.
  /// - Throws: `USAGE` naming the text and showing valid examples, for text
  ///   that is empty, has no unit, an unknown unit, adds up to zero, or is
  ///   longer than ``maximum``.
  public static func parse(_ text: String) throws -> Duration {
    func invalid(_ why: String) -> FolioError {
      FolioError(
        .usage, "invalid duration '\(text)': \(why); write a number and a unit, such as 500ms, 5s, 2m or 1h")
    }
    let limit = maximum.seconds
    var totalSeconds = 0.0
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
      switch unit {
      case "ms": totalSeconds += value / 1000
      case "s": totalSeconds += value
      case "m": totalSeconds += value * 60
      case "h": totalSeconds += value * 3600
      case "": throw invalid("'\(number)' has no unit")
      default: throw invalid("unknown unit '\(unit)'")
      }
      // Checked before the conversion to nanoseconds, which traps past Int64.
      if totalSeconds > limit { throw invalid("it is longer than the limit of 8760h (a year)") }
    }
    let total = Duration.nanoseconds(Int64((totalSeconds * 1e9).rounded()))
    if total <= .zero { throw invalid("it must be longer than zero") }
    return total
  }

  /// `duration` as people write it and ``parse(_:)`` reads it back:
  /// `30m`, `1h30m`, `24h`, or `1500ms` when it is not whole seconds.
  /// Below a millisecond is dropped.
  public static func format(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
    if milliseconds % 1000 != 0 { return "\(milliseconds)ms" }
    let whole = milliseconds / 1000
    let (h, m, s) = (whole / 3600, whole % 3600 / 60, whole % 60)
    let text = (h > 0 ? "\(h)h" : "") + (m > 0 ? "\(m)m" : "") + (s > 0 ? "\(s)s" : "")
    return text.isEmpty ? "0s" : text
  }
}

extension Duration {
  /// The duration in seconds, as a `Double` (for deadlines on a monotonic clock).
  package var seconds: Double {
    let (whole, attoseconds) = components
    return Double(whole) + Double(attoseconds) / 1e18
  }
}
