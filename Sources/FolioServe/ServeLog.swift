import FolioSystem
import Glibc

/// The server's lines on stderr, from a file that imports only Glibc (see
/// STYLE.md, "stderr"). One `write(2)` per line, so lines from concurrent
/// connections never interleave.
enum ServeLog {
  @Sendable static func write(_ line: String) {
    FileSystem.writeBestEffort(STDERR_FILENO, Array((line + "\n").utf8))
  }
}
