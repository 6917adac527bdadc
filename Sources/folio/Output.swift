import Glibc

/// Writes to stdout and stderr. Data goes to stdout, flushed per line so
/// that pipes into `jq` see each record at once; diagnostics go to stderr.
enum Output {
  static func print(_ text: String) {
    var line = text
    line.append("\n")
    write(line, to: STDOUT_FILENO)
  }

  static func printRaw(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { write($0, to: STDOUT_FILENO) }
  }

  static func error(_ text: String) {
    write(text + "\n", to: STDERR_FILENO)
  }

  private static func write(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
  }

  private static func write(_ buffer: UnsafeRawBufferPointer, to fd: Int32) {
    var offset = 0
    while offset < buffer.count {
      let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
      if n < 0 {
        if errno == EINTR { continue }
        return  // a closed pipe: nothing more to say
      }
      offset += n
    }
  }
}
