/// The object keys a parser has read before, so that reading one again
/// gives back the same `String` instead of building a new one.
///
/// The documents of a table repeat the same keys, and building a key costs
/// more than finding it here: a key longer than 15 bytes needs an
/// allocation, a shorter one still a call into the standard library. The
/// cache also gives each key its fingerprint, which the parser's duplicate
/// check uses.
///
/// Each fingerprint maps to one slot, and a key found there with other
/// bytes takes the slot over, so the cache never grows past
/// ``slotCount`` entries of at most ``longestKey`` bytes each.
///
/// Each entry also remembers the slot of the key that followed it in its
/// object, and the first key of the last object is remembered too. The
/// documents of a table mostly have their keys in the same order, so the
/// parser first checks whether the bytes at hand are that key, which
/// spares it scanning the key and hashing it.
struct JSONKeyCache {
  /// A key's first 32 bytes as little-endian words, zero past its end.
  struct Words: Equatable {
    var w0: UInt64 = 0
    var w1: UInt64 = 0
    var w2: UInt64 = 0
    var w3: UInt64 = 0
  }

  private struct Entry {
    var words = Words()
    /// -1 in a slot never used.
    var count = -1
    var print: UInt64 = 0
    /// The slot of the key that came after this one last time, or -1.
    var next = -1
    var key = ""
  }

  static let slotCount = 512
  static let longestKey = 64

  // Empty until the first key, so that a parser that reads no objects does
  // not pay for the slots.
  private var entries: [Entry] = []
  // The slot of the first key of the last object, or -1.
  private var firstKey = -1

  /// The key that followed the key in slot `previous` last time (the
  /// first key of the last object when `previous` is -1), if the bytes at
  /// `start` are that key and its closing quote.
  ///
  /// - Parameter readable: How many bytes from `start` on may be read.
  /// - Returns: The key, its fingerprint, its slot, and its length in bytes
  ///   (without quotes).
  @inline(__always)
  func predictedKey(
    after previous: Int, _ start: UnsafePointer<UInt8>, readable: Int
  ) -> (key: String, print: UInt64, slot: Int, count: Int)? {
    if entries.isEmpty { return nil }
    return entries.withUnsafeBufferPointer { entries in
      let slot = previous < 0 ? firstKey : entries[previous].next
      guard slot >= 0 else { return nil }
      let entry = entries.baseAddress! + slot
      let count = entry.pointee.count
      // A match means valid, escape-free bytes: the cached key's are.
      guard count >= 0, count < readable, start[count] == UInt8(ascii: "\""),
        Self.words(start, count: count, readable: readable) == entry.pointee.words
      else { return nil }
      if count > 32 {
        // The words hold only the first 32 bytes.
        let same = entry.pointee.key.withUTF8Bytes { bytes in
          compareUTF8(bytes, UnsafeBufferPointer(start: start, count: count)) == 0
        }
        if !same { return nil }
      }
      return (entry.pointee.key, entry.pointee.print, slot, count)
    }
  }

  /// The key of `count` bytes at `start`, which are valid UTF-8 with no
  /// escapes (all ASCII when `ascii`), its fingerprint, and its slot (-1 if
  /// it is too long to keep).
  ///
  /// - Parameters:
  ///   - readable: How many bytes from `start` on may be read, at least
  ///     `count`: the cache reads whole words when it can.
  ///   - previous: The slot of the key before this one in its object, or
  ///     -1 if this is the first: this key becomes its prediction.
  @inline(__always)
  mutating func key(
    _ start: UnsafePointer<UInt8>, count: Int, readable: Int, ascii: Bool, after previous: Int
  ) -> (key: String, print: UInt64, slot: Int) {
    let words = Self.words(start, count: count, readable: readable)
    let print = Self.fingerprint(words, start, count: count)
    if entries.isEmpty {
      entries = Array(repeating: Entry(), count: Self.slotCount)
    }
    let slot = Int(truncatingIfNeeded: print >> UInt64(64 - Self.slotCount.trailingZeroBitCount))
    let found = entries.withUnsafeBufferPointer { entries -> String? in
      let entry = entries.baseAddress! + slot
      guard entry.pointee.count == count, entry.pointee.words == words else { return nil }
      if count > 32 {
        // The words hold only the first 32 bytes.
        let same = entry.pointee.key.withUTF8Bytes { bytes in
          compareUTF8(bytes, UnsafeBufferPointer(start: start, count: count)) == 0
        }
        if !same { return nil }
      }
      return entry.pointee.key
    }
    if let found {
      remember(slot, after: previous)
      return (found, print, slot)
    }
    let key = JSONParser.makeString(start, count, ascii: ascii)
    guard count <= Self.longestKey else {
      remember(-1, after: previous)
      return (key, print, -1)
    }
    entries[slot] = Entry(words: words, count: count, print: print, key: key)
    remember(slot, after: previous)
    return (key, print, slot)
  }

  @inline(__always)
  private mutating func remember(_ slot: Int, after previous: Int) {
    if previous < 0 {
      firstKey = slot
    } else if entries[previous].next != slot {
      entries[previous].next = slot
    }
  }

  /// The fingerprint of a key, the same as ``key(_:count:readable:ascii:)``
  /// gives for the same bytes.
  static func fingerprint(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    guard let start = bytes.baseAddress, bytes.count > 0 else {
      return fingerprint(Words(), UnsafePointer(bitPattern: 1)!, count: 0)
    }
    let words = words(start, count: bytes.count, readable: bytes.count)
    return fingerprint(words, start, count: bytes.count)
  }

  /// Mixes a key's length, its first 32 bytes and its last eight. Equal
  /// keys get equal fingerprints; different keys almost always differ, and
  /// the top bits, which pick the slot, are the best mixed.
  @inline(__always)
  private static func fingerprint(
    _ words: Words, _ start: UnsafePointer<UInt8>, count: Int
  ) -> UInt64 {
    var print =
      (words.w0 &* 0x9E37_79B9_7F4A_7C15) ^ (words.w1 &* 0xC2B2_AE3D_27D4_EB4F)
      ^ (words.w2 &* 0x1656_67B1_9E37_79F9) ^ (words.w3 &* 0xD6E8_FEB8_6659_FD93)
      ^ UInt64(truncatingIfNeeded: count)
    if count > 32 {
      let tail = UInt64(
        littleEndian: UnsafeRawPointer(start + count - 8).loadUnaligned(as: UInt64.self))
      print ^= tail &* 0xFF51_AFD7_ED55_8CCD
    }
    return print
  }

  /// The first 32 bytes of `count` at `start`, as little-endian words, zero
  /// past `count`.
  @inline(__always)
  private static func words(
    _ start: UnsafePointer<UInt8>, count: Int, readable: Int
  ) -> Words {
    if readable >= 32 {
      // Whole words, with the bytes past the key masked off.
      let raw = UnsafeRawPointer(start)
      return Words(
        w0: UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)) & mask(count),
        w1: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
          & mask(count &- 8),
        w2: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
          & mask(count &- 16),
        w3: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
          & mask(count &- 24))
    }
    var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    withUnsafeMutableBytes(of: &bytes) { out in
      for k in 0..<Swift.min(count, 32) { out[k] = start[k] }
    }
    return Words(
      w0: UInt64(littleEndian: bytes.0), w1: UInt64(littleEndian: bytes.1),
      w2: UInt64(littleEndian: bytes.2), w3: UInt64(littleEndian: bytes.3))
  }

  /// A mask of the low `valid` bytes of a word (all of them from 8 on).
  @inline(__always)
  private static func mask(_ valid: Int) -> UInt64 {
    // Without branches: the shift is taken modulo 64, and the two selects
    // become conditional moves.
    let bits = UInt64(truncatingIfNeeded: valid &* 8)
    let partial = (1 &<< bits) &- 1
    return valid >= 8 ? ~0 : (valid <= 0 ? 0 : partial)
  }
}
