import Foundation
import Glibc
import Synchronization

/// Unlinks files on threads of its own, so that whoever hands them over
/// goes on at once: for the files a checkout's swaps leave at temp names.
///
/// Freeing a file's blocks can wait on the disk. With the `discard` mount
/// option, ext4 sends the device a discard for each freed extent and waits
/// for it, inside `unlink`, after the folder's lock is released. A checkout
/// that unlinks the 10,000 files it replaces spends most of its time in
/// those waits. Here they overlap with the writing and with each other.
///
/// ```swift
/// let unlinks = DeferredUnlinks()
/// unlinks.unlink(".k1.json.folio-tmp", in: folder, path: "items/k1.json")
/// try unlinks.finish()   // every file handed over is gone
/// ```
///
/// Until ``finish()`` returns, a file handed over may still be there.
/// Files that go missing first (`ENOENT`) are no error.
package final class DeferredUnlinks: Sendable {
  /// What the threads share with the caller.
  private let shared: Shared
  /// Signalled once per file handed over, and once per thread at the end.
  private let ready = DispatchSemaphore(value: 0)
  private let done = DispatchGroup()
  private let threads: Int

  /// Starts `threads` threads that unlink what they are given.
  package init(threads: Int = 4) {
    precondition(threads > 0, "DeferredUnlinks needs a thread")
    self.threads = threads
    let shared = Shared()
    self.shared = shared
    for index in 0..<threads {
      done.enter()
      let thread = Thread { [ready, done] in
        while true {
          ready.wait()
          guard let job = shared.take() else { break }
          shared.run(job)
        }
        done.leave()
      }
      thread.name = "folio.unlink.\(index)"
      thread.start()
    }
  }

  /// Whether unlinks under the folder `root` are worth handing over:
  /// not on a file system held in memory (tmpfs, ramfs), where an unlink
  /// never waits on a device and the threads would only take turns with
  /// the caller's for the CPU.
  package static func payOff(under root: String) -> Bool {
    let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return true }
    defer { close(fd) }
    let inMemory: Set<UInt64> = [0x0102_1994, 0x8584_58F6]  // TMPFS_MAGIC, RAMFS_MAGIC
    return FileSystem.fileSystemType(fd).map { !inMemory.contains($0) } ?? true
  }

  deinit {
    // A caller that threw before finishing still has its threads stopped.
    try? finish()
  }

  /// Hands over the file `name` in `folder`, to be unlinked soon; `path`
  /// names it in an error.
  package func unlink(_ name: String, in folder: OpenFolder, path: String) {
    shared.state.withLock {
      precondition(!$0.finishing, "DeferredUnlinks.unlink after finish()")
      $0.jobs.append(Job(folder: folder, name: name, path: path))
    }
    ready.signal()
  }

  /// Waits until every file handed over is unlinked, and stops the
  /// threads; later calls return at once.
  /// - Throws: the first failure of an unlink, once.
  package func finish() throws {
    let first = shared.state.withLock { state -> Bool in
      defer { state.finishing = true }
      return !state.finishing
    }
    if first {
      for _ in 0..<threads { ready.signal() }
      done.wait()
    }
    if let error = shared.state.withLock({ state in
      defer { state.error = nil }
      return state.error
    }) {
      throw error
    }
  }

  /// One file to unlink.
  private struct Job: Sendable {
    let folder: OpenFolder
    let name: String
    let path: String
  }

  /// The queue and the first failure, behind one lock.
  private final class Shared: Sendable {
    struct State: Sendable {
      var jobs: [Job] = []
      var next = 0
      var finishing = false
      var error: (any Error)?
    }
    let state = Mutex(State())

    /// The next job, or nil when there is none left and none will come
    /// (a thread's signal to stop).
    func take() -> Job? {
      state.withLock { state in
        guard state.next < state.jobs.count else { return nil }
        defer {
          state.next += 1
          if state.next == state.jobs.count {
            state.jobs.removeAll(keepingCapacity: true)
            state.next = 0
          }
        }
        return state.jobs[state.next]
      }
    }

    func run(_ job: Job) {
      do {
        _ = try FileSystem.syscall("unlinkat", path: job.path, expecting: [ENOENT]) {
          Glibc.unlinkat(job.folder.descriptor, job.name, 0)
        }
      } catch {
        state.withLock { if $0.error == nil { $0.error = error } }
      }
    }
  }
}
