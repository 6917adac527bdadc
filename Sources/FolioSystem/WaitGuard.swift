import Glibc
import Synchronization

/// The threads on which ``LiveQuery/stop()`` must not wait for a handler
/// call running on another thread.
///
/// A thread is marked while it holds a store's write lock or runs a
/// live-query handler. A handler running elsewhere may be waiting for that
/// very thread: for the store lock (a handler that writes), or for a handler
/// that it stops in turn (two handlers that stop each other). Waiting there
/// would deadlock; returning at once still keeps the promise that no handler
/// call starts after `stop()` returns.
package enum WaitGuard {
  /// How deep each marked thread is (a handler may write, a write may stop).
  private static let depths = Mutex<[pthread_t: Int]>([:])

  /// Runs `body` with the current thread marked.
  package static func marking<T>(_ body: () throws -> T) rethrows -> T {
    let thread = pthread_self()
    depths.withLock { $0[thread, default: 0] += 1 }
    defer {
      depths.withLock { depths in
        let depth = depths[thread]! - 1
        depths[thread] = depth == 0 ? nil : depth
      }
    }
    return try body()
  }

  /// Whether the current thread holds a store lock or runs a handler.
  package static var currentThreadIsMarked: Bool {
    let thread = pthread_self()
    return depths.withLock { $0[thread] != nil }
  }
}
