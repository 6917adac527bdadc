import Folio
import FolioTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import FolioSystem

/// The syscall helpers in `FileSystem`: an interrupted call is made again,
/// expected failures come back as values, and others throw an error naming
/// the syscall and the path.
@Suite(.serialized) struct SyscallTests {
  /// Counts SIGUSR1 deliveries (a signal handler can reach only globals).
  static let signals = Atomic<Int>(0)

  /// Whether a thread of this process is in read(2) on `fd` now, as
  /// `/proc/self/task/*/syscall` says (the syscall's number, then its
  /// arguments, the descriptor first).
  static func aThreadIsReading(_ fd: Int32) -> Bool {
    #if arch(x86_64)
      let read = "0"
    #elseif arch(arm64)
      let read = "63"
    #else
      return true  // no number known here: only the signal count orders the test
    #endif
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.contains { task in
      guard let text = try? String(contentsOfFile: "/proc/self/task/\(task)/syscall", encoding: .utf8) else {
        return false
      }
      let fields = text.split(separator: " ")
      return fields.count > 1 && fields[0] == read && fields[1] == "0x" + String(fd, radix: 16)
    }
  }

  @Test func anInterruptedReadIsMadeAgain() throws {
    // No SA_RESTART: the kernel ends the blocked read with EINTR.
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in SyscallTests.signals.add(1, ordering: .relaxed) }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    var previous = sigaction()
    #expect(sigaction(SIGUSR1, &action, &previous) == 0)
    defer { sigaction(SIGUSR1, &previous, nil) }

    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let (readEnd, writeEnd) = (fds[0], fds[1])
    defer {
      close(readEnd)
      close(writeEnd)
    }
    let reader = Mutex<pthread_t?>(nil)
    let result = Mutex<Result<Int, FolioError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      // Test runner threads block most signals, and a new thread inherits that.
      var mask = sigset_t()
      sigemptyset(&mask)
      sigaddset(&mask, SIGUSR1)
      pthread_sigmask(SIG_UNBLOCK, &mask, nil)
      reader.withLock { $0 = pthread_self() }
      var byte: UInt8 = 0
      let read = Result {
        try withUnsafeMutableBytes(of: &byte) { try FileSystem.readSome(readEnd, into: $0, path: "pipe") }
      }
      result.withLock { $0 = read.mapError { $0 as? FolioError ?? FolioError(.io, "\($0)") } }
      done.signal()
    }
    thread.start()
    try #require(eventually { reader.withLock { $0 } != nil }, "the reader thread never started")
    let target = try #require(reader.withLock { $0 })
    let before = Self.signals.load(ordering: .relaxed)
    // Interrupt the read a few times while it waits, then give it a byte.
    // Each signal waits until the thread is in read(2) again, and the next
    // until the handler has run (two pending signals would be one).
    for n in 1...3 {
      try #require(eventually { Self.aThreadIsReading(readEnd) }, "signal \(n): the reader is not in read(2)")
      pthread_kill(target, SIGUSR1)
      try #require(
        eventually { Self.signals.load(ordering: .relaxed) - before == n }, "signal \(n) was not handled")
    }
    try #require(eventually { Self.aThreadIsReading(readEnd) }, "the read was not made again")
    var byte: UInt8 = 7
    #expect(write(writeEnd, &byte, 1) == 1)
    done.wait()
    #expect(Self.signals.load(ordering: .relaxed) - before == 3)
    #expect(try result.withLock({ $0 })?.get() == 1)
  }

  @Test func failuresNameTheSyscallAndThePath() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let dirfd = open(scratch.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { close(dirfd) }
    let error = #expect(throws: FolioError.self) {
      try FileSystem.openAt(dirfd, "missing/file", O_RDONLY, path: "store/missing/file")
    }
    #expect(error?.code == .io && error?.function == "openat" && error?.path == "store/missing/file")
    #expect(error?.description == "error: IO: store/missing/file: No such file or directory (openat)")

    // Expected failures come back as values.
    let missing = try FileSystem.openAt(dirfd, "missing", O_RDONLY, path: "missing", expecting: [ENOENT])
    #expect(missing == .failure(FileSystem.Errno(code: ENOENT)))

    // A lock another open file holds is a `false`, not an error.
    let path = scratch.path + "/lock"
    let first = try FileSystem.openFile(path, O_RDWR | O_CREAT | O_CLOEXEC)
    let second = try FileSystem.openFile(path, O_RDWR | O_CLOEXEC)
    defer {
      close(first)
      close(second)
    }
    #expect(try FileSystem.lockFile(first, LOCK_EX | LOCK_NB, path: path))
    #expect(try !FileSystem.lockFile(second, LOCK_EX | LOCK_NB, path: path))
  }
}
