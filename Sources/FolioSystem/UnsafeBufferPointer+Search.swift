internal import CSystem

extension UnsafeBufferPointer where Element == UInt8 {
  /// Where `needle` first occurs at or after `start`, found by glibc's
  /// `memmem` (a log of megabytes is searched for one document's lines).
  package func firstOffset(of needle: [UInt8], from start: Int) -> Int? {
    guard let base = baseAddress, start < count, !needle.isEmpty else { return nil }
    guard let hit = memmem(base + start, count - start, needle, needle.count) else { return nil }
    return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
  }
}
