import Dispatch
import Folio
import Glibc

/// SIGINT and SIGTERM, turned into a call on an ordinary queue, for the
/// commands that run until interrupted (`watch`, `observe`, `serve`,
/// `index-daemon`) or that stop early when asked (`import`).
///
/// The handlers are in place from the moment this is made, so a signal sent
/// right after a "listening" line is not lost. A handler may do little
/// safely: it writes a byte to a pipe, and a Dispatch source on the pipe's
/// other end runs `action` and ends ``wait()``. The first signal does that;
/// later ones are taken and do nothing more, unless `action` put back the
/// default handlers (`import` does, so a second Ctrl-C ends it at once).
/// One per process; it need not be kept for `action` to run (the source
/// keeps itself until it fires).
final class InterruptSignals {
  /// The pipe's write end, for the handler (which can reach only globals);
  /// set once, before the handlers are installed.
  nonisolated(unsafe) private static var writeEnd: Int32 = -1
  /// Set by the handler itself, before any queue runs `action`: a call the
  /// signal interrupted (`EINTR`) can tell at once that it should stop.
  /// A word written once from a handler and only read elsewhere.
  nonisolated(unsafe) private static var arrivedFlag: Int32 = 0

  /// Whether SIGINT or SIGTERM has arrived, as the handler saw it.
  static var hasArrived: Bool { arrivedFlag != 0 }

  private let done = DispatchSemaphore(value: 0)
  private let source: any DispatchSourceRead

  /// Takes SIGINT and SIGTERM from now on.
  /// - Parameters:
  ///   - restartingCalls: false lets the signal interrupt a call that waits
  ///     (`EINTR`), for work that waits for input it may never get (an
  ///     import reading a FIFO no writer opens) and must then stop.
  ///   - action: runs once, on a Dispatch queue, at the first signal.
  init(restartingCalls: Bool = true, onInterrupt action: @escaping @Sendable () -> Void = {}) throws {
    precondition(Self.writeEnd == -1, "one InterruptSignals per process")
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else {
      throw FolioError(.io, String(cString: strerror(errno)), function: "pipe")
    }
    for fd in fds {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      // A full pipe already holds a signal: the handler must not block.
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    Self.writeEnd = fds[1]
    let source = DispatchSource.makeReadSource(fileDescriptor: fds[0], queue: .global())
    self.source = source
    source.setEventHandler { [done] in
      // Once: the byte stays unread, so the source would fire again. (The
      // handler holds the source, and so keeps it, until this cancel.)
      source.cancel()
      action()
      done.signal()
    }
    source.resume()
    // A parent may start us with these blocked (the mask is inherited),
    // and then they would never arrive.
    var mask = sigset_t()
    sigemptyset(&mask)
    for number in [SIGINT, SIGTERM] { sigaddset(&mask, number) }
    pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    for number in [SIGINT, SIGTERM] {
      var handler = sigaction()
      handler.__sigaction_handler.sa_handler = { _ in
        // The interrupted code may be about to read errno.
        let saved = errno
        InterruptSignals.arrivedFlag = 1
        var byte: UInt8 = 1
        _ = write(InterruptSignals.writeEnd, &byte, 1)
        errno = saved
      }
      sigemptyset(&handler.sa_mask)
      handler.sa_flags = restartingCalls ? SA_RESTART : 0
      sigaction(number, &handler, nil)
    }
  }

  /// Blocks until SIGINT or SIGTERM has arrived and `action` has run.
  func wait() {
    done.wait()
    done.signal()
  }
}
