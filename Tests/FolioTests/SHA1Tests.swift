import FolioSystem
import FolioTestSupport
import Foundation
import Testing

/// SHA-1 on the processor's SHA extensions and in portable Swift, against
/// `sha1sum` (coreutils), for messages of every length around the block
/// size and a few megabytes fed in uneven pieces.
struct SHA1Tests {
  static func sha1sum(_ bytes: [UInt8]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha1sum")
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    // Written from another thread: sha1sum reads while this one waits.
    let writer = Thread {
      input.fileHandleForWriting.write(Data(bytes))
      try? input.fileHandleForWriting.close()
    }
    writer.start()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return String(text.prefix(40))
  }

  static func digest(_ bytes: [UInt8], portable: Bool, pieces: [Int]) -> String {
    var hash = SHA1(portable: portable)
    var start = 0
    var k = 0
    while start < bytes.count {
      let end = min(bytes.count, start + max(1, pieces[k % pieces.count]))
      bytes[start..<end].withUnsafeBytes { hash.update($0) }
      start = end
      k += 1
    }
    return SHA1.hex(hash.finish())
  }

  @Test func bothWaysAgreeWithSha1sum() throws {
    let seed = testSeed()
    var random = SplitMix(seed: seed)
    var lengths = Array(0...200) + [4095, 4096, 4097, 65_536]
    lengths.append(3_000_000 + Int(random.next() % 1000))
    for length in lengths {
      let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      let pieces = (0..<5).map { _ in Int(random.next() % 300) }
      let expected = try Self.sha1sum(bytes)
      #expect(
        Self.digest(bytes, portable: true, pieces: pieces) == expected, "length \(length), seed \(seed)")
      #expect(
        Self.digest(bytes, portable: false, pieces: pieces) == expected, "length \(length), seed \(seed)")
      #expect(
        Self.digest(bytes, portable: false, pieces: [1 << 20]) == expected, "length \(length), seed \(seed)")
    }
    // This machine has the extensions: the hardware path was the one tested.
    if FileManager.default.contents(atPath: "/proc/cpuinfo").map({ String(decoding: $0, as: UTF8.self) })?
      .contains(" sha_ni") == true
    {
      #expect(SHA1.hardwareAvailable)
    }
  }
}
