import Folio
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

/// `FileSystem.read` stops at a regular file's short read at its size, so
/// every size must still come back whole, and pseudo-files whose stat says
/// 0 bytes must be read to their real end.
@Suite struct FileSystemReadTests {
  @Test(arguments: [0, 1, 439, 4096, 4097, 65_536, 1_000_003])
  func aRegularFileReadsWhole(size: Int) throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    let path = scratch.path + "/file"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    #expect(try FileSystem.read(path) == bytes)
  }

  @Test func aProcFileWhoseStatSaysZeroBytesReadsToItsEnd() throws {
    var st = stat()
    #expect(stat("/proc/self/status", &st) == 0 && st.st_size == 0)
    let text = String(decoding: try #require(try FileSystem.read("/proc/self/status")), as: UTF8.self)
    #expect(text.hasPrefix("Name:"), "\(text.prefix(40))")
    // The last field of the file, well past the first read.
    #expect(text.contains("voluntary_ctxt_switches:") && text.hasSuffix("\n"), "\(text.suffix(80))")
  }

  @Test func aPipeReadsToTheEndOfItsStream() throws {
    // A pipe is no regular file: fstat says 0, and reads go on to the end.
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let (readEnd, writeEnd) = (fds[0], fds[1])
    let payload = Array(repeating: UInt8(ascii: "x"), count: 10_000)
    let writer = Thread {
      payload.withUnsafeBytes { _ = write(writeEnd, $0.baseAddress, $0.count) }
      close(writeEnd)
    }
    writer.start()
    defer { close(readEnd) }
    #expect(try FileSystem.readAll(readEnd, path: "pipe") == payload)
  }
}
