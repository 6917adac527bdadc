/// Per-key quiet periods: a key is due once no event touched it for
/// `delay` seconds, so the burst of events one save makes (truncate, write,
/// close; or rename away, create, write, close) yields one piece of work.
struct Debouncer<Key: Hashable> {
  /// The quiet period, in seconds.
  var delay: Double
  private var deadlines: [Key: Double] = [:]

  init(delay: Double) {
    self.delay = delay
  }

  /// Whether nothing is waiting.
  var isEmpty: Bool { deadlines.isEmpty }

  /// Marks `key` as touched at `now`: it is due `delay` seconds later.
  mutating func touch(_ key: Key, now: Double) {
    deadlines[key] = now + delay
  }

  /// Makes `key` due after `seconds` (a retry), unless it is already waiting.
  mutating func retry(_ key: Key, after seconds: Double, now: Double) {
    if deadlines[key] == nil { deadlines[key] = now + seconds }
  }

  /// The earliest deadline, if any key is waiting.
  var nextDeadline: Double? { deadlines.values.min() }

  /// Removes and returns the keys whose quiet period has passed.
  mutating func takeDue(now: Double) -> [Key] {
    let due = deadlines.filter { $0.value <= now }.map(\.key)
    for key in due { deadlines[key] = nil }
    return due
  }

  /// Removes and returns every waiting key (shutdown flushes them all).
  mutating func takeAll() -> [Key] {
    defer { deadlines.removeAll() }
    return Array(deadlines.keys)
  }
}
