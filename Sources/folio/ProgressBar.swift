import Foundation
import Glibc

/// A one-line progress bar on stderr with a rate and an ETA, drawn only when
/// stderr is a terminal and at most ten times a second; silent otherwise.
final class ProgressBar {
  private let enabled = isatty(STDERR_FILENO) == 1
  private let start = Date()
  private var lastDraw = Date.distantPast
  private var drawn = false
  private let unit: String

  init(unit: String) { self.unit = unit }

  /// Redraws with `count` items done and `done` of `total` work units (for
  /// the bar and ETA; nil total draws a counter only).
  func update(count: Int, done: Int, total: Int?, phase: String, force: Bool = false) {
    guard enabled else { return }
    let now = Date()
    guard force || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
    lastDraw = now
    let elapsed = max(now.timeIntervalSince(start), 0.001)
    let rate = Double(count) / elapsed
    var line = "\r\u{1B}[K"
    if let total, total > 0 {
      let fraction = min(1, Double(done) / Double(total))
      let width = 24
      let filled = Int(fraction * Double(width))
      line +=
        "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
      line += String(format: "%3.0f%% ", fraction * 100)
      let remaining = fraction > 0 ? elapsed / fraction - elapsed : 0
      line += "\(count) \(unit), \(Int(rate)) \(unit)/s, ETA \(ProgressBar.clock(remaining))"
    } else {
      line += "\(count) \(unit), \(Int(rate)) \(unit)/s"
    }
    if phase != "reading" && phase != "writing" { line += " (\(phase))" }
    drawn = true
    FileHandle.standardError.write(Data(line.utf8))
  }

  /// Clears the bar before the summary is printed.
  func finish() {
    guard enabled, drawn else { return }
    FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
  }

  /// Seconds since the bar started.
  var elapsed: Double { Date().timeIntervalSince(start) }

  static func clock(_ seconds: Double) -> String {
    let s = Int(seconds.rounded())
    return s >= 3600
      ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
      : String(format: "%d:%02d", s / 60, s % 60)
  }
}
