import Foundation
import Synchronization

/// Writes an import's staged documents on a thread of its own, so that
/// creating 300k files (kernel work, the import's floor) overlaps with
/// parsing, formatting, hashing and deflating the next rows.
///
/// At most `capacity` files wait at once (the import's `batchSize`), which
/// bounds memory. The first
/// write error is kept and thrown by the next ``write(_:to:)`` or by
/// ``finish()``; writes after it are dropped, since the import is failing.
/// The owner must call ``finish()``, also on failure: the thread holds the
/// writer until then.
final class StagingWriter: @unchecked Sendable {
  // @unchecked: `state` is guarded by its Mutex; the semaphores are thread-safe.
  private struct State {
    var queue: [(path: String, bytes: [UInt8])] = []
    var head = 0
    var error: FolioError?
  }

  private let state = Mutex(State())
  private let items = DispatchSemaphore(value: 0)
  private let space: DispatchSemaphore
  private let idle = DispatchSemaphore(value: 0)
  private let done = DispatchSemaphore(value: 0)
  private var finished = false

  init(capacity: Int) {
    space = DispatchSemaphore(value: capacity)
    let thread = Thread { [self] in run() }
    thread.name = "folio-import-writer"
    thread.start()
  }

  /// Queues `bytes` to be written as the file `path` (created or truncated).
  func write(_ bytes: [UInt8], to path: String) throws {
    if let error = state.withLock({ $0.error }) { throw error }
    space.wait()
    state.withLock { $0.queue.append((path, bytes)) }
    items.signal()
  }

  /// Waits until every queued file is written.
  func drain() throws {
    state.withLock { $0.queue.append(("", [])) }  // an empty path marks a barrier
    items.signal()
    idle.wait()
    if let error = state.withLock({ $0.error }) { throw error }
  }

  /// Writes what is queued, stops the thread, and throws the first error.
  func finish() throws {
    guard !finished else { return }
    finished = true
    items.signal()
    done.wait()
    if let error = state.withLock({ $0.error }) { throw error }
  }

  private func run() {
    while true {
      items.wait()
      let next: (path: String, bytes: [UInt8])? = state.withLock { s in
        guard s.head < s.queue.count else { return nil }
        let item = s.queue[s.head]
        s.queue[s.head] = ("", [])
        s.head += 1
        if s.head >= 4096 && s.head * 2 >= s.queue.count {
          s.queue.removeFirst(s.head)
          s.head = 0
        }
        return item
      }
      guard let next else {
        // Signalled with nothing queued: only `finish()` does that.
        done.signal()
        return
      }
      if next.path.isEmpty {
        idle.signal()
        continue
      }
      defer { space.signal() }
      if state.withLock({ $0.error }) != nil { continue }
      do {
        try Self.writeFile(next.path, next.bytes)
      } catch let error as FolioError {
        state.withLock { $0.error = $0.error ?? error }
      } catch {
        state.withLock { $0.error = $0.error ?? FolioError(.io, "\(error)", path: next.path) }
      }
    }
  }

  private static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = try FileSystem.syscall("open", path: path) {
      open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    }
    defer { close(fd) }
    try FileSystem.writeAll(fd, bytes, path: path)
  }
}
