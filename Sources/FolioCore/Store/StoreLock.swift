import FolioSystem
import Foundation
import Glibc
import Synchronization

/// The store-wide write lock: one writer at a time, across threads and
/// processes.
///
/// Threads of one process queue on a mutex; processes queue on `flock` of
/// `.git/folio/lock`, which the kernel releases when a holder dies, so a
/// crashed writer never leaves the store locked. A waiter gives up after
/// `timeout` seconds with an error naming the holder's pid.
package final class StoreLock: Sendable {
  let path: String
  let timeout: Double
  /// What the lock guards, as its error names it ("the store").
  let subject: String
  private let gate = Mutex(())

  init(path: String, timeout: Double, subject: String = "the store") {
    self.path = path
    self.timeout = timeout
    self.subject = subject
  }

  /// The timeout in force in this process (``FolioSettings/lockTimeout``).
  static var defaultTimeout: Double { FolioSettings.current.lockTimeout }

  /// Runs `body` while holding the lock.
  package func withLock<T>(_ body: () throws -> T) throws -> T {
    var result: Result<T, any Error>?
    gate.withLock { _ in
      result = Result { try withFileLock(body) }
    }
    return try result!.get()
  }

  private func withFileLock<T>(_ body: () throws -> T) throws -> T {
    let fd = try FileSystem.syscall("open", path: path) {
      open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    defer { close(fd) }
    let deadline = SystemClock.monotonicSeconds() + timeout
    var pause: UInt32 = 1_000
    while try !FileSystem.lockFile(fd, LOCK_EX | LOCK_NB, path: path) {
      if SystemClock.monotonicSeconds() >= deadline {
        let holder =
          (try? FileSystem.read(path)).flatMap { String(decoding: $0, as: UTF8.self) }
          .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let who = holder.isEmpty ? "another process" : "process \(holder)"
        throw FolioError(
          .locked,
          "\(subject) is locked by \(who); gave up after \(timeout.formatted1)s. "
            + "Wait for it to finish, or raise FOLIO_LOCK_TIMEOUT",
          path: path)
      }
      // Back off from 1 ms to 50 ms: short waits stay short, long ones stay cheap.
      usleep(pause)
      pause = min(pause * 2, 50_000)
    }
    defer { flock(fd, LOCK_UN) }
    // Written over, then cut to its length: truncating to zero first would
    // free the file's block and allocate it again on every write (on a
    // mount with `discard`, a wait on the disk each time).
    let pid = Array("\(getpid())\n".utf8)
    _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    _ = ftruncate(fd, off_t(pid.count))
    // A live query stopped inside the body must not wait for a handler that
    // may be waiting for this lock (FolioSystem/WaitGuard.swift).
    return try WaitGuard.marking(body)
  }
}

extension Double {
  fileprivate var formatted1: String {
    let tenths = (self * 10).rounded()
    return tenths.truncatingRemainder(dividingBy: 10) == 0
      ? String(Int(tenths / 10)) : String(tenths / 10)
  }
}
