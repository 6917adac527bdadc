import FolioSystem
import Foundation
import Testing

/// How long a test waits for a state it expects (a file, an event, a
/// process listening) before it fails. Long, so that a loaded machine is
/// slow rather than failing; a state that arrives ends the wait at once.
///
public let stateTimeout: Double = 60

/// Checks `condition` every few milliseconds until it holds, for at most
/// `timeout` seconds.
/// - Returns: whether it held.
@discardableResult
public func eventually(timeout: Double = stateTimeout, _ condition: () throws -> Bool) rethrows -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while true {
    if try condition() { return true }
    if Date() >= deadline { return false }
    usleep(5_000)
  }
}

/// Lets `seconds` go by, for a test that paces what it does itself: an
/// editor saving every few milliseconds, a consumer slow on purpose, the
/// random gaps of a crash test, a retry's back-off. Never to wait for a
/// state: ``eventually(timeout:_:)`` does that, and ends as soon as the
/// state holds.
public func pause(seconds: Double) {
  guard seconds > 0 else { return }
  usleep(useconds_t(min(seconds, 60) * 1_000_000))
}

/// ``eventually(timeout:_:)`` for async tests: checks `condition` every
/// few milliseconds without holding a thread, and records an issue if it
/// never holds. It runs on the caller's actor, so a `@MainActor` test can
/// check main-actor state while the main queue goes on delivering.
public func waitUntil(
  isolation: isolated (any Actor)? = #isolation, timeout: Double = stateTimeout,
  sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async throws {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    if Date() >= deadline {
      Issue.record("timed out after \(Int(timeout)) s", sourceLocation: sourceLocation)
      return
    }
    try await Task.sleep(nanoseconds: 5_000_000)
  }
}

/// Waits until the wall clock, in the milliseconds that op stamps and
/// generated pks carry, has moved on from where it is now: a stamp taken
/// after this returns is later, by the clock, than any taken before the
/// call (in this process or in one that has ended).
public func waitForNextMillisecond() {
  let now = SystemClock.nowMilliseconds()
  eventually { SystemClock.nowMilliseconds() > now }
}
