/// Git's compressed bitmaps (EWAH, as `Documentation/technical/index-format`
/// and `ewah/ewah_io.c` lay them out), which a split index's `link`
/// extension uses to mark the shared index's entries it deletes or
/// replaces.
///
/// On disk: the number of bits, the number of 64-bit words, the words, and
/// the position of the last marker word, all big-endian. The words run as a
/// marker followed by literal words: a marker's bit 0 is the value of a run
/// of whole words, its bits 1–32 the run's length in words, and its bits
/// 33–63 how many literal words follow it. A literal word's bit `i` is the
/// bitmap's bit `64 × word + i`.
enum EWAHBitmap {
  /// The set bits of the bitmap at the start of `bytes`, in increasing
  /// order, and how many bytes it took; nil when the bytes are not a whole
  /// bitmap, or it sets a bit at `limit` or beyond.
  ///
  /// The work is bounded by the bytes and `limit`, whatever the words claim.
  static func decode(_ bytes: UnsafeRawBufferPointer, limit: Int) -> (positions: [Int], length: Int)? {
    guard bytes.count >= 8 else { return nil }
    let wordCount = Int(word32(bytes, 4))
    let length = 8 + wordCount * 8 + 4
    guard wordCount <= (bytes.count - 12) / 8 else { return nil }
    var positions: [Int] = []
    var bit = 0
    var pointer = 0
    while pointer < wordCount {
      let marker = word64(bytes, 8 + pointer * 8)
      pointer += 1
      let run = Int((marker >> 1) & 0xFFFF_FFFF) * 64
      if marker & 1 != 0, run > 0 {
        // A run of ones: every bit in it is set, so it must fit the limit.
        guard run <= limit - bit else { return nil }
        positions.append(contentsOf: bit..<(bit + run))
      }
      bit += run
      let literals = Int(marker >> 33)
      guard literals <= wordCount - pointer else { return nil }
      for _ in 0..<literals {
        var literal = word64(bytes, 8 + pointer * 8)
        pointer += 1
        while literal != 0 {
          let position = bit + literal.trailingZeroBitCount
          guard position < limit else { return nil }
          positions.append(position)
          literal &= literal - 1
        }
        bit += 64
      }
    }
    return (positions, length)
  }

  /// The bitmap whose set bits are `positions` (increasing, no repeats).
  static func encode(_ positions: [Int]) -> [UInt8] {
    var words: [UInt64] = []
    var lastMarker = 0
    // Literal words, each with the number of the 64-bit word it is.
    var literals: [(index: Int, bits: UInt64)] = []
    for position in positions {
      let index = position / 64
      if literals.last?.index == index {
        literals[literals.count - 1].bits |= 1 << UInt64(position % 64)
      } else {
        literals.append((index, 1 << UInt64(position % 64)))
      }
    }
    // A marker per gap of zero words, then the literal words up to the next gap.
    var next = 0
    var start = 0
    while start < literals.count {
      var end = start + 1
      while end < literals.count, literals[end].index == literals[end - 1].index + 1 { end += 1 }
      let zeros = UInt64(literals[start].index - next)
      lastMarker = words.count
      words.append(zeros << 1 | UInt64(end - start) << 33)
      words += literals[start..<end].map(\.bits)
      next = literals[end - 1].index + 1
      start = end
    }
    if words.isEmpty { words.append(0) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(12 + words.count * 8)
    func append32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
    append32(UInt32((positions.last ?? -1) + 1))
    append32(UInt32(words.count))
    for word in words { withUnsafeBytes(of: word.bigEndian) { bytes += $0 } }
    append32(UInt32(lastMarker))
    return bytes
  }

  private static func word32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
    UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
  }

  private static func word64(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
    UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }
}
