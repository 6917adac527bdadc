/// FNV-1a, 64-bit: a fast fingerprint for telling file contents apart (not
/// for security).
package enum FNV {
  package static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      hash ^= UInt64(byte)
      hash = hash &* 0x0000_0100_0000_01b3
    }
    return hash
  }

  /// The hash as 16 hex digits.
  package static func hex(_ bytes: some Sequence<UInt8>) -> String {
    let text = String(hash(bytes), radix: 16)
    return String(repeating: "0", count: 16 - text.count) + text
  }
}
