import FolioSystem
import Glibc

/// Reads a file or stdin in chunks into a window that readers consume from
/// the front, so a file of any size is read with memory bounded by the
/// longest record, not by the file.
final class ByteStream {
  /// The name used in error locations (`<stdin>` for standard input).
  let name: String
  private let fd: Int32
  private let ownsDescriptor: Bool
  /// The window: `buffer[start..<end]` is read but not yet consumed.
  private(set) var buffer: [UInt8]
  private(set) var start = 0
  private(set) var end = 0
  /// Whether the file has no more bytes beyond the window.
  private(set) var atEOF = false
  /// Bytes consumed before the window, for progress.
  private(set) var consumedBefore = 0
  /// The file's size when known (a regular file), for progress and ETA.
  let totalSize: Int?

  static let chunkSize = 1 << 20

  /// Where every byte read is also written, so that input that can be read
  /// only once (stdin, a pipe) can be read again (an import staged twice).
  var copy: (fd: Int32, path: String)?

  /// Opens `path`, or stdin for `-`; reads `chunkSize` bytes at a time.
  init(path: String, displayName: String? = nil, chunkSize: Int = ByteStream.chunkSize) throws {
    if path == "-" {
      fd = STDIN_FILENO
      ownsDescriptor = false
      name = displayName ?? "<stdin>"
    } else {
      fd = try FileSystem.syscall("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
      ownsDescriptor = true
      name = displayName ?? path
    }
    totalSize = FileSystem.regularFileSize(descriptor: fd)
    buffer = [UInt8](repeating: 0, count: chunkSize)
  }

  /// A stream over bytes in memory (tests).
  init(bytes: [UInt8], name: String) {
    fd = -1
    ownsDescriptor = false
    self.name = name
    buffer = bytes
    end = bytes.count
    atEOF = true
    totalSize = bytes.count
  }

  deinit { if ownsDescriptor { close(fd) } }

  /// Total bytes consumed so far.
  var position: Int { consumedBefore + start }

  /// Skips a UTF-8 byte order mark at the front of the window, if any.
  func skipByteOrderMark() throws {
    while end - start < 3, try fill() != nil {}
    if end - start >= 3, buffer[start] == 0xEF, buffer[start + 1] == 0xBB, buffer[start + 2] == 0xBF {
      consume(3)
    }
  }

  /// Marks `count` bytes at the front of the window as consumed.
  func consume(_ count: Int) {
    precondition(count <= end - start, "consumed past the window")
    start += count
  }

  /// Moves the window to offset `index` in the buffer (a reader's cursor).
  func consume(upTo index: Int) { consume(index - start) }

  /// Reads more bytes behind the window, moving the window to the front of
  /// the buffer and growing the buffer when the window fills it. Offsets
  /// into the buffer held by the caller shift by the returned amount
  /// (subtract it). Returns nil at end of file.
  @discardableResult
  func fill() throws -> Int? {
    if atEOF { return nil }
    var shift = 0
    if start > 0 {
      let count = end - start
      buffer.withUnsafeMutableBytes { raw in
        _ = memmove(raw.baseAddress!, raw.baseAddress! + start, count)
      }
      consumedBefore += start
      shift = start
      start = 0
      end = count
    }
    if end == buffer.count {
      buffer.append(contentsOf: repeatElement(0, count: buffer.count))
    }
    let readEnd = end
    let n = try buffer.withUnsafeMutableBytes { raw in
      try FileSystem.syscall("read", path: name) { read(fd, raw.baseAddress! + readEnd, raw.count - readEnd) }
    }
    if n == 0 { atEOF = true }
    if let copy { try FileSystem.writeAll(copy.fd, buffer[readEnd..<(readEnd + n)], path: copy.path) }
    end += n
    return shift
  }
}
