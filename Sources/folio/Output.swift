import Glibc

/// Writes to stdout and stderr. Data goes to stdout, flushed per line so
/// that pipes into `jq` see each record at once; diagnostics go to stderr.
enum Output {
  static func print(_ text: String, terminator: String = "\n") {
    write(text + terminator, to: STDOUT_FILENO)
  }

  static func printRaw(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { write($0, to: STDOUT_FILENO) }
  }

  /// Whether text on stdout may be coloured: stdout is a terminal and
  /// `NO_COLOR` is not set.
  static var stdoutTakesColour: Bool { isatty(STDOUT_FILENO) != 0 && getenv("NO_COLOR") == nil }

  static func error(_ text: String, terminator: String = "\n") {
    write(text + terminator, to: STDERR_FILENO)
  }

  private static func write(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
  }

  /// Makes a write to a closed pipe an `EPIPE` error instead of a signal,
  /// so ``write(_:to:)`` can tell it from a failed disk. Call first thing.
  static func ignoreBrokenPipeSignal() {
    signal(SIGPIPE, SIG_IGN)
  }

  private static func write(_ buffer: UnsafeRawBufferPointer, to fd: Int32) {
    var offset = 0
    while offset < buffer.count {
      let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
      if n < 0 {
        let code = errno
        if code == EINTR { continue }
        guard fd == STDOUT_FILENO else { return }  // nowhere left to complain
        // As git: a reader that stopped reading (`folio query | head`) is a
        // quiet success. Any other failure (a full disk) must not pass for
        // one: the data is incomplete.
        if code == EPIPE { exit(0) }
        error("error: IO: cannot write to standard output: \(String(cString: strerror(code)))")
        exit(1)
      }
      offset += n
    }
  }
}
