/// Per-key quiet periods: a key is due once no event touched it for
/// `delay` seconds, so the burst of events one save makes (truncate, write,
/// close; or rename away, create, write, close) yields one piece of work.
///
/// A key touched without pause is still due `maxWait` after its first
/// touch, so a file saved over and over is recorded as it goes.
struct Debouncer<Key: Hashable> {
  /// The quiet period, in seconds.
  var delay: Double
  /// The longest a key waits after its first touch, in seconds.
  var maxWait: Double
  private var deadlines: [Key: Double] = [:]
  private var firstTouches: [Key: Double] = [:]

  init(delay: Double, maxWait: Double? = nil) {
    self.delay = delay
    self.maxWait = max(maxWait ?? delay * 10, delay)
  }

  /// Whether `key` is waiting.
  func isPending(_ key: Key) -> Bool { deadlines[key] != nil }

  /// Whether nothing is waiting.
  var isEmpty: Bool { deadlines.isEmpty }

  /// Marks `key` as touched at `now`: it is due `delay` seconds later.
  mutating func touch(_ key: Key, now: Double) {
    let first = firstTouches[key] ?? now
    firstTouches[key] = first
    deadlines[key] = min(now + delay, first + maxWait)
  }

  /// Makes `key` due after `seconds` (a retry), unless it is already waiting.
  mutating func retry(_ key: Key, after seconds: Double, now: Double) {
    if deadlines[key] == nil { deadlines[key] = now + seconds }
  }

  /// Makes `key` due at `deadline` at the earliest, whatever its quiet
  /// period says (a writer still holds the file open).
  mutating func postpone(_ key: Key, until deadline: Double) {
    if firstTouches[key] == nil { firstTouches[key] = deadline }
    deadlines[key] = max(deadlines[key] ?? deadline, deadline)
  }

  /// The earliest deadline, if any key is waiting.
  var nextDeadline: Double? { deadlines.values.min() }

  /// Removes and returns the keys whose quiet period has passed.
  mutating func takeDue(now: Double) -> [Key] {
    let due = deadlines.filter { $0.value <= now }.map(\.key)
    for key in due {
      deadlines[key] = nil
      firstTouches[key] = nil
    }
    return due
  }

  /// Removes and returns every waiting key (shutdown flushes them all).
  mutating func takeAll() -> [Key] {
    defer {
      deadlines.removeAll()
      firstTouches.removeAll()
    }
    return Array(deadlines.keys)
  }
}
