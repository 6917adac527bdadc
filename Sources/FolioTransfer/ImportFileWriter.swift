import FolioSystem
import Foundation
import Glibc
import Synchronization

/// Writes an import's staged documents on a thread of its own, so that
/// creating 300k files (kernel work, the import's floor) overlaps with
/// parsing, formatting, hashing and deflating the next rows.
///
/// Files are created by name in one open folder (`openat`), so the kernel
/// walks one path component per file, not the whole path.
///
/// At most `capacity` files wait at once (the import's `batchSize`), which
/// bounds memory. The first
/// write error is kept and thrown by the next ``write(_:to:)`` or by
/// ``finish()``; writes after it are dropped, since the import is failing.
/// The owner must call ``finish()``, also on failure: the thread holds the
/// writer until then.
final class ImportFileWriter: @unchecked Sendable {
  // @unchecked: `state` is guarded by its Mutex; the semaphores are
  // thread-safe; `directory`, `folder` and `recorder` never change after
  // init, and the recorder is used by the writer's thread alone until
  // ``finish()`` has joined it.
  private struct State {
    var queue: [(name: String, pk: String, bytes: [UInt8])] = []
    var head = 0
    var error: FolioError?
  }

  private let state = Mutex(State())
  private let items = DispatchSemaphore(value: 0)
  private let space: DispatchSemaphore
  private let idle = DispatchSemaphore(value: 0)
  private let done = DispatchSemaphore(value: 0)
  private var finished = false
  /// The folder the files go into, and its descriptor.
  private let directory: String
  private let folder: Int32

  /// Records each file written for the table's packed cache.
  let recorder: ImportPackRecorder?

  /// Starts a writer of files in `directory`.
  init(capacity: Int, directory: String, recorder: ImportPackRecorder?) throws {
    self.directory = directory
    self.recorder = recorder
    folder = try FileSystem.syscall("open", path: directory) {
      open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }
    space = DispatchSemaphore(value: capacity)
    let thread = Thread { [self] in run() }
    thread.name = "folio-import-writer"
    thread.start()
  }

  deinit { close(folder) }

  /// Queues `bytes` (the canonical form of document `pk`) to be written as
  /// the file `name` in the folder (created or truncated).
  func write(_ bytes: [UInt8], named name: String, pk: String) throws {
    precondition(!name.isEmpty, "an empty name marks a barrier")
    if let error = state.withLock({ $0.error }) { throw error }
    space.wait()
    state.withLock { $0.queue.append((name, pk, bytes)) }
    items.signal()
  }

  /// Waits until every queued file is written.
  func drain() throws {
    state.withLock { $0.queue.append(("", "", [])) }  // an empty path marks a barrier
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
      let next: (name: String, pk: String, bytes: [UInt8])? = state.withLock { s in
        guard s.head < s.queue.count else { return nil }
        let item = s.queue[s.head]
        s.queue[s.head] = ("", "", [])
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
      if next.name.isEmpty {
        idle.signal()
        continue
      }
      defer { space.signal() }
      if state.withLock({ $0.error }) != nil { continue }
      do {
        try writeFile(next.name, pk: next.pk, next.bytes)
      } catch let error as FolioError {
        state.withLock { $0.error = $0.error ?? error }
      } catch {
        state.withLock {
          $0.error = $0.error ?? FolioError(.io, "\(error)", path: directory + "/" + next.name)
        }
      }
    }
  }

  private func writeFile(_ name: String, pk: String, _ bytes: [UInt8]) throws {
    // The path is only spelled out for an error.
    let flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW
    var opened = try FileSystem.openAt(folder, name, flags, path: directory + "/" + name, expecting: [ENOENT])
    if case .failure = opened, name.utf8.contains(UInt8(ascii: "/")) {
      // The first file of a hashed or nested table's folder: it and the
      // folders above it, outermost first.
      for slash in name.utf8.indices where name.utf8[slash] == UInt8(ascii: "/") {
        let subfolder = String(name[..<slash])
        _ = try FileSystem.syscall("mkdirat", path: directory + "/" + subfolder, expecting: [EEXIST]) {
          mkdirat(folder, subfolder, 0o755)
        }
      }
      opened = try FileSystem.openAt(folder, name, flags, path: directory + "/" + name, expecting: [])
    }
    guard case .success(let fd) = opened else {
      throw FileSystem.error(ENOENT, "openat", path: directory + "/" + name)
    }
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    if written != bytes.count {
      try FileSystem.writeAll(
        fd, bytes[max(written, 0)...], path: directory + "/" + name)
    }
    recorder?.wrote(pk: pk, canonical: bytes, fd: fd)
  }
}
