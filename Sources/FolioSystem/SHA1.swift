internal import CSHA1

/// Streaming SHA-1 (FIPS 180-4), for the trailer git puts on a pack file.
/// Not for security: git's object format fixes the algorithm.
///
/// Whole blocks go to the processor's SHA extensions where it has them
/// (`CSHA1`), about eight times as fast as the rounds written here, which
/// serve the rest.
package struct SHA1 {
  /// Whether the processor's SHA extensions are there (checked once).
  package static let hardwareAvailable = folio_sha1_hardware() != 0
  /// Whether this hash uses them.
  private let hardware: Bool
  private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
    0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
  )
  private var pending: [UInt8] = []
  private var length: UInt64 = 0

  package init() { self.init(portable: false) }

  /// A hash that uses only the rounds written here when `portable`
  /// (tests compare it with the extensions).
  package init(portable: Bool) {
    hardware = !portable && Self.hardwareAvailable
    pending.reserveCapacity(64)
  }

  /// Adds bytes to the message.
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    length += UInt64(bytes.count)
    var offset = 0
    if !pending.isEmpty {
      let take = min(64 - pending.count, bytes.count)
      pending.append(contentsOf: bytes[0..<take])
      offset = take
      if pending.count == 64 {
        pending.withUnsafeBytes { compressAny($0.baseAddress!) }
        pending.removeAll(keepingCapacity: true)
      }
    }
    let blocks = (bytes.count - offset) / 64
    if blocks > 0 && hardware {
      var words = [state.0, state.1, state.2, state.3, state.4]
      folio_sha1_blocks(&words, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, blocks)
      state = (words[0], words[1], words[2], words[3], words[4])
      offset += blocks * 64
    }
    while bytes.count - offset >= 64 {
      compress(bytes.baseAddress! + offset)
      offset += 64
    }
    if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
  }

  /// Adds bytes to the message.
  package mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

  /// `bytes` (a digest) as lowercase hex digits, two a byte.
  package static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 15)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// The 20-byte digest.
  package mutating func finish() -> [UInt8] {
    let bitLength = length &* 8
    var tail: [UInt8] = [0x80]
    while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
      tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    let saved = length
    tail.withUnsafeBytes { update($0) }
    length = saved
    var out: [UInt8] = []
    for word in [state.0, state.1, state.2, state.3, state.4] {
      out += [
        UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
        UInt8(truncatingIfNeeded: word),
      ]
    }
    return out
  }

  /// One block, on the SHA extensions where the processor has them.
  private mutating func compressAny(_ block: UnsafeRawPointer) {
    guard hardware else { return compress(block) }
    var words = [state.0, state.1, state.2, state.3, state.4]
    folio_sha1_blocks(&words, block.assumingMemoryBound(to: UInt8.self), 1)
    state = (words[0], words[1], words[2], words[3], words[4])
  }

  // The message schedule lives in a 16-word ring on the stack (no array
  // per block: this hashes a whole import's pack and index file), and each
  // stretch of rounds has its own loop, so no round tests its number.
  private mutating func compress(_ block: UnsafeRawPointer) {
    var (a, b, c, d, e) = state
    var w = (
      UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0),
      UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0)
    )
    withUnsafeMutableBytes(of: &w) { raw in
      let w = raw.baseAddress!.assumingMemoryBound(to: UInt32.self)
      for i in 0..<16 {
        w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
      }
      for i in 0..<16 {
        let x = w[i]
        let temp = (a << 5 | a >> 27) &+ ((b & c) | (~b & d)) &+ e &+ 0x5A82_7999 &+ x
        e = d
        d = c
        c = b << 30 | b >> 2
        b = a
        a = temp
      }
      for i in 16..<20 {
        let mixed = w[(i &+ 13) & 15] ^ w[(i &+ 8) & 15] ^ w[(i &+ 2) & 15] ^ w[i & 15]
        let x = mixed << 1 | mixed >> 31
        w[i & 15] = x
        let temp = (a << 5 | a >> 27) &+ ((b & c) | (~b & d)) &+ e &+ 0x5A82_7999 &+ x
        e = d
        d = c
        c = b << 30 | b >> 2
        b = a
        a = temp
      }
      for i in 20..<40 {
        let mixed = w[(i &+ 13) & 15] ^ w[(i &+ 8) & 15] ^ w[(i &+ 2) & 15] ^ w[i & 15]
        let x = mixed << 1 | mixed >> 31
        w[i & 15] = x
        let temp = (a << 5 | a >> 27) &+ (b ^ c ^ d) &+ e &+ 0x6ED9_EBA1 &+ x
        e = d
        d = c
        c = b << 30 | b >> 2
        b = a
        a = temp
      }
      for i in 40..<60 {
        let mixed = w[(i &+ 13) & 15] ^ w[(i &+ 8) & 15] ^ w[(i &+ 2) & 15] ^ w[i & 15]
        let x = mixed << 1 | mixed >> 31
        w[i & 15] = x
        let temp = (a << 5 | a >> 27) &+ ((b & c) | (b & d) | (c & d)) &+ e &+ 0x8F1B_BCDC &+ x
        e = d
        d = c
        c = b << 30 | b >> 2
        b = a
        a = temp
      }
      for i in 60..<80 {
        let mixed = w[(i &+ 13) & 15] ^ w[(i &+ 8) & 15] ^ w[(i &+ 2) & 15] ^ w[i & 15]
        let x = mixed << 1 | mixed >> 31
        w[i & 15] = x
        let temp = (a << 5 | a >> 27) &+ (b ^ c ^ d) &+ e &+ 0xCA62_C1D6 &+ x
        e = d
        d = c
        c = b << 30 | b >> 2
        b = a
        a = temp
      }
    }
    state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
  }
}
