import Synchronization

/// Set once by a signal's action (``InterruptSignals``), read by the work it
/// should stop.
final class InterruptFlag: Sendable {
  private let value = Atomic<Bool>(false)

  /// Marks the work as interrupted.
  func set() { value.store(true, ordering: .relaxed) }

  /// Whether ``set()`` was called.
  var isSet: Bool { value.load(ordering: .relaxed) }
}
