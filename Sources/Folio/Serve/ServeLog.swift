import Glibc

/// The server's lines on stderr, from a file that imports only Glibc (see
/// STYLE.md, "stderr"). One `write(2)` per line, so lines from concurrent
/// connections never interleave.
enum ServeLog {
  @Sendable static func write(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let n = Glibc.write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        offset += n
      }
    }
  }
}
