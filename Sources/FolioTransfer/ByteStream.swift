import FolioCore
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

  /// The longest record a reader may hold in the window, in bytes: past it
  /// ``fill()`` refuses the input (`TOO_LARGE`) rather than grow the
  /// window, so `/dev/zero` or a gigabyte field costs this much memory,
  /// not the file's size. Nil: no bound (tests).
  var recordLimit: Int?

  /// Asked when a wait for input (a FIFO's open, a read of a pipe) is
  /// interrupted by a signal: true ends the wait with `INTERRUPTED`.
  private let shouldStop: (@Sendable () -> Bool)?

  /// Opens `path`, or stdin for `-`; reads `chunkSize` bytes at a time.
  /// - Parameter shouldStop: see ``shouldStop``.
  init(
    path: String, displayName: String? = nil, chunkSize: Int = ByteStream.chunkSize,
    shouldStop: (@Sendable () -> Bool)? = nil
  ) throws {
    self.shouldStop = shouldStop
    let shown = displayName ?? (path == "-" ? "<stdin>" : path)
    if path == "-" {
      fd = STDIN_FILENO
      ownsDescriptor = false
    } else {
      fd = try Self.waiting(for: "open", path: shown, shouldStop) { open(path, O_RDONLY | O_CLOEXEC) }
      ownsDescriptor = true
    }
    name = shown
    totalSize = FileSystem.regularFileSize(descriptor: fd)
    buffer = [UInt8](repeating: 0, count: chunkSize)
  }

  /// A stream over bytes in memory (tests).
  init(bytes: [UInt8], name: String) {
    shouldStop = nil
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
      if let recordLimit, end > recordLimit {
        throw recordTooLarge("a record (a line, a CSV field or a JSON element)", at: consumedBefore + end)
      }
      buffer.append(contentsOf: repeatElement(0, count: buffer.count))
    }
    let readEnd = end
    let n = try buffer.withUnsafeMutableBytes { raw in
      try Self.waiting(for: "read", path: name, shouldStop) {
        read(fd, raw.baseAddress! + readEnd, raw.count - readEnd)
      }
    }
    if n == 0 { atEOF = true }
    if let copy { try FileSystem.writeAll(copy.fd, buffer[readEnd..<(readEnd + n)], path: copy.path) }
    end += n
    return shift
  }

  /// The error for `record`, which ran past ``recordLimit`` at byte
  /// `offset` of the input without ending.
  func recordTooLarge(_ record: String, at offset: Int) -> FolioError {
    FolioError(
      .tooLarge,
      "\(record) runs past \(ByteSize.format(recordLimit ?? 0)) at byte \(offset) without ending; nothing past "
        + "it was read. The store's documents are at most `limits: document:` in folio.yaml",
      path: name)
  }

  /// Runs a call that may wait for a writer (`open` of a FIFO, `read` of a
  /// pipe) again after a signal interrupts it, unless `shouldStop` says the
  /// work was stopped: then it throws `INTERRUPTED`, so that Ctrl-C or
  /// SIGTERM ends an import still waiting for input.
  private static func waiting<T: FixedWidthInteger>(
    for function: StaticString, path: String, _ shouldStop: (@Sendable () -> Bool)?, _ call: () -> T
  ) throws -> T {
    while true {
      let result = call()
      if result >= 0 { return result }
      let code = errno
      if code == EINTR {
        if shouldStop?() == true {
          throw FolioError(
            .interrupted, "interrupted while waiting for input; nothing was imported", path: path)
        }
        continue
      }
      throw FileSystem.error(code, function, path: path)
    }
  }
}
