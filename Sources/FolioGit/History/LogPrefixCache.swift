internal import CZlib
import FolioSystem

/// Remembers which committed version of an op log the working log was last
/// found to extend, so that blame need not inflate that version again.
///
/// Inflating a 13 MB log takes about 40 ms, a CRC-32 of it about 6. A
/// line `path oid size crc` records that the working log's first `size`
/// bytes were, when checked, the blob `oid`, and had that CRC. A log that
/// was appended to since still starts with them; one rewritten since (a
/// compaction, a checkout) fails the CRC and is checked in full again.
/// The file is a cache in `.git/folio`, never committed: losing it costs
/// one inflate.
struct LogPrefixCache {
  private let path: String
  private var entries: [String: (blob: String, size: Int, crc: UInt32)] = [:]
  private var changed = false

  init(directory: String) {
    path = directory + "/log-prefixes"
    guard let bytes = try? FileSystem.read(path) else { return }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count == 4, let size = Int(fields[2]), let crc = UInt32(fields[3], radix: 16) else {
        continue
      }
      entries[String(fields[0])] = (String(fields[1]), size, crc)
    }
  }

  /// Whether `bytes`, the working copy of the log at `logPath`, starts
  /// with the blob `blob`, of `size` bytes.
  mutating func isPrefix(
    _ blob: GitOID, size: Int, of bytes: [UInt8], logPath: String, repository: GitRepository
  ) throws -> Bool {
    if let known = entries[logPath], known.blob == blob.description, known.size <= bytes.count,
      Self.crc(bytes, count: known.size) == known.crc
    {
      return true
    }
    guard try repository.isPrefix(blob, of: bytes) else { return false }
    entries[logPath] = (blob.description, size, Self.crc(bytes, count: size))
    changed = true
    return true
  }

  /// Writes what was learnt, if anything; a failure only costs the next
  /// blame an inflate.
  func save() {
    guard changed else { return }
    // Paths in the ops folder have no spaces or newlines (replica ids).
    let text = entries.sorted { $0.key < $1.key }.map { path, entry in
      "\(path) \(entry.blob) \(entry.size) \(String(entry.crc, radix: 16))\n"
    }.joined()
    try? FileSystem.writeAtomically(path, Array(text.utf8), sync: false)
  }

  private static func crc(_ bytes: [UInt8], count: Int) -> UInt32 {
    bytes.withUnsafeBufferPointer { buffer in
      var crc = crc32_z(0, nil, 0)
      var offset = 0
      while offset < count {
        let chunk = min(count - offset, 1 << 30)
        crc = crc32_z(crc, buffer.baseAddress! + offset, chunk)
        offset += chunk
      }
      return UInt32(crc)
    }
  }
}
