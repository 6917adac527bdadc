import Dispatch
import Glibc

/// SIGINT and SIGTERM, taken by Dispatch from the moment this is made (so a
/// signal sent right after a "listening" line is not lost), until ``wait()``
/// sees one. For commands that run until interrupted: `observe`, `serve`.
final class InterruptSignals {
  private let done = DispatchSemaphore(value: 0)
  private var sources: [any DispatchSourceSignal] = []

  init() {
    for number in [SIGINT, SIGTERM] {
      // Dispatch takes the signal instead of the default handler, which
      // would end the process with a non-zero status.
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { [done] in done.signal() }
      source.resume()
      sources.append(source)
    }
  }

  /// Blocks until SIGINT or SIGTERM arrives.
  func wait() {
    done.wait()
    for source in sources { source.cancel() }
  }
}
