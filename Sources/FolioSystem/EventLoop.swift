internal import CSystem
import Foundation
import Glibc
import Synchronization

/// One thread's wait for everything it reacts to, in one `poll`: one inotify
/// descriptor, any other descriptors to read (a listening socket), a
/// deadline, and a wake pipe that ends the wait. An idle loop uses no CPU:
/// it wakes only for an event, a readable descriptor, its deadline or
/// ``Handle/stop()``, never on a timer tick.
///
/// Handlers are registered per inotify watch and per descriptor. They run
/// on the loop's thread, one at a time, in the order the kernel queued the
/// events; ``afterWake`` runs once after every wake-up's handlers. A handler
/// may add and remove watches, or call ``stop()``: no handler runs after it.
///
/// A loop is confined to the thread that made it (it is not `Sendable`);
/// other threads end it through its ``Handle``. Each user owns its own loop,
/// because a handler may take a lock (the store lock) that a handler of
/// another user, on a shared thread, could be waiting for.
///
/// ```swift
/// let handle = try EventLoop.startThread(named: "folio.example") { loop, started in
///   _ = try loop.watch(folder, mask: UInt32(IN_CLOSE_WRITE)) { event in print(event.name) }
///   started()
///   try loop.run()
/// }
/// handle.stop()
/// ```
package final class EventLoop {
  /// The part of a loop that other threads may hold: it ends the loop.
  ///
  /// A pipe whose read end the loop polls; ``stop()`` writes a byte that is
  /// never read, so a loop stopped before it runs returns at once, and
  /// stopping twice is harmless. Owns both ends and closes them in `deinit`.
  package final class Handle: Sendable {
    fileprivate let readEnd: Int32
    private let writeEnd: Int32

    package init() throws {
      (readEnd, writeEnd) = try FileSystem.pipe(flags: O_CLOEXEC | O_NONBLOCK)
    }

    deinit {
      close(readEnd)
      close(writeEnd)
    }

    /// Ends the loop's ``EventLoop/run()`` after the handler running now.
    /// Safe from any thread, twice, and before the loop runs.
    package func stop() {
      var byte: UInt8 = 1
      // A full pipe already holds a stop: EAGAIN is fine.
      _ = FileSystem.retrying { Glibc.write(writeEnd, &byte, 1) }
    }
  }

  /// What ends this loop from other threads.
  package let handle: Handle
  /// Seconds on ``Clock/monotonicSeconds()`` at which ``afterWake`` must run
  /// even if nothing happens; nil to wait for events only. Asked before
  /// every wait.
  package var deadline: () -> Double? = { nil }
  /// Runs after the handlers of every wake-up (and when the deadline
  /// passes). What it throws ends ``run()``.
  package var afterWake: () throws -> Void = {}

  private var inotify: Inotify?
  private var watchHandlers: [Int32: (Inotify.Event) -> Void] = [:]
  private var overflowHandler: () -> Void = {}
  private var readers: [Reader] = []
  private var stopped = false

  /// A descriptor to poll for reading, and what to do when it is readable.
  private struct Reader {
    var descriptor: Int32
    var handler: () -> Void
  }

  /// A loop on the calling thread, ended by `handle`.
  package init(handle: Handle) {
    self.handle = handle
  }

  /// Starts a thread named `name` that makes a loop and hands it to `body`.
  /// `body` registers its handlers, calls `started`, and then runs the loop
  /// (with any work of its own before and after).
  ///
  /// This call returns once `started` is called, or throws what `body`
  /// threw before calling it; what it throws later only ends the thread.
  /// - Returns: the loop's handle, to stop it.
  package static func startThread(
    named name: String, _ body: @escaping @Sendable (_ loop: EventLoop, _ started: () -> Void) throws -> Void
  ) throws -> Handle {
    let handle = try Handle()
    let outcome = Mutex<Result<Void, any Error>?>(nil)
    let ready = DispatchSemaphore(value: 0)
    let thread = Thread {
      let loop = EventLoop(handle: handle)
      var reported = false
      let started = {
        guard !reported else { return }
        reported = true
        outcome.withLock { $0 = .success(()) }
        ready.signal()
      }
      do {
        try body(loop, started)
      } catch {
        if !reported {
          reported = true
          outcome.withLock { $0 = .failure(error) }
          ready.signal()
        }
      }
      // A body that returned without calling `started` has nothing to run.
      started()
    }
    thread.name = name
    thread.start()
    ready.wait()
    try outcome.withLock { $0 }?.get()
    return handle
  }

  // MARK: Registering

  /// The loop's inotify instance, made on first use (a loop that only
  /// reads descriptors needs none).
  package func inotifyInstance() throws -> Inotify {
    if let inotify { return inotify }
    let made = try Inotify()
    inotify = made
    return made
  }

  /// Watches `path` for `mask` and hands each of its events to `handler`.
  ///
  /// Adding a watch on a folder already watched returns the same id (the
  /// kernel's rule) and replaces its handler. After the kernel drops a
  /// watch (`IN_IGNORED`, delivered to its handler) the handler is removed.
  /// - Returns: the watch id, or nil when `path` does not exist.
  package func watch(_ path: String, mask: UInt32, handler: @escaping (Inotify.Event) -> Void) throws
    -> Int32?
  {
    guard let watch = try inotifyInstance().addWatch(path, mask: mask) else { return nil }
    watchHandlers[watch] = handler
    return watch
  }

  /// Stops a watch; no event of it is handled after this.
  package func unwatch(_ watch: Int32) {
    watchHandlers[watch] = nil
    inotify?.removeWatch(watch)
  }

  /// Runs `handler` when the kernel dropped events (`IN_Q_OVERFLOW`).
  package func onOverflow(_ handler: @escaping () -> Void) {
    overflowHandler = handler
  }

  /// Runs `handler` whenever `descriptor` is readable (the caller owns and
  /// closes it).
  package func onReadable(_ descriptor: Int32, handler: @escaping () -> Void) {
    readers.append(Reader(descriptor: descriptor, handler: handler))
  }

  /// Makes ``run()`` return once the handler running now is done; for
  /// handlers (other threads use ``handle``).
  package func stop() {
    stopped = true
  }

  // MARK: Running

  /// Hands every queued inotify event to its handler now, without waiting.
  /// - Throws: `IO` when the queue cannot be read.
  package func drain() throws {
    guard let inotify else { return }
    deliver(try inotify.readEvents())
  }

  /// Hands `events` to their handlers, in order.
  package func deliver(_ events: [Inotify.Event]) {
    for event in events {
      if stopped { return }
      if event.has(IN_Q_OVERFLOW) {
        overflowHandler()
        continue
      }
      watchHandlers[event.watch]?(event)
      // The kernel has dropped the watch; its id may be handed out again.
      if event.has(IN_IGNORED) { watchHandlers[event.watch] = nil }
    }
  }

  /// Waits and hands out events until ``stop()`` or the handle's stop.
  /// - Throws: what ``afterWake`` throws, or `IO` when `poll` or the
  ///   inotify queue fails.
  package func run() throws {
    while !stopped {
      var fds = [pollfd(fd: handle.readEnd, events: Int16(POLLIN), revents: 0)]
      if let inotify { fds.append(pollfd(fd: inotify.descriptor, events: Int16(POLLIN), revents: 0)) }
      let firstReader = fds.count
      for reader in readers { fds.append(pollfd(fd: reader.descriptor, events: Int16(POLLIN), revents: 0)) }
      var timeout: Int32 = -1
      if let deadline = deadline() {
        let milliseconds = (deadline - SystemClock.monotonicSeconds()) * 1000
        timeout = Int32(max(0, min(milliseconds.rounded(.up), Double(Int32.max))))
      }
      try FileSystem.poll(&fds, timeout: timeout, path: "")
      if fds[0].revents != 0 { return }
      if inotify != nil && fds[1].revents != 0 { try drain() }
      for (offset, reader) in readers.enumerated() where !stopped {
        if fds[firstReader + offset].revents != 0 { reader.handler() }
      }
      if stopped { return }
      try afterWake()
    }
  }
}
