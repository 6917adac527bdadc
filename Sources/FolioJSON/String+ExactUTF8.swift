// JSON compares strings by their exact bytes. Swift's `String ==` and `<`
// use Unicode canonical equivalence, so "é" (U+00E9) and "e\u{301}" compare
// equal there, while they are two different JSON strings. These helpers are
// what the JSON layer uses instead.

extension String {
  /// Calls `body` with the string's UTF-8 bytes. Native Swift strings (and
  /// small ones) are contiguous, so this does not copy. Inlinable, so that
  /// callers in other modules get it specialized: called generically, each
  /// call looks up metadata, which dominated sorting 100k pks.
  @inlinable @inline(__always)
  package func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
    if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
    return try Array(utf8).withUnsafeBufferPointer(body)
  }

  /// Whether the two strings have exactly the same UTF-8 bytes (the same
  /// Unicode scalars), with no normalization.
  @inline(__always)
  package func utf8Equals(_ other: String) -> Bool {
    // `utf8.count` is O(1) for native strings, and most unequal keys
    // differ in length, so this check saves the byte walk.
    guard utf8.count == other.utf8.count else { return false }
    return withUTF8Bytes { a in
      other.withUTF8Bytes { b in compareUTF8(a, b) == 0 }
    }
  }

  /// Compares by UTF-8 bytes, which is Unicode code point order: negative,
  /// zero or positive as `self` sorts before, equal to, or after `other`.
  @inline(__always)
  package func utf8Compare(_ other: String) -> Int {
    withUTF8Bytes { a in
      other.withUTF8Bytes { b in compareUTF8(a, b) }
    }
  }

  /// Feeds the exact UTF-8 bytes to `hasher`, so the hash agrees with
  /// ``utf8Equals(_:)``.
  @inline(__always)
  package func hashUTF8(into hasher: inout Hasher) {
    withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    // The length ends the byte run, so ["ab"] and ["a", "b"] hash apart.
    hasher.combine(utf8.count)
  }
}

/// Lexicographic comparison of two byte buffers, eight bytes at a time.
@inline(__always)
func compareUTF8(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
  let n = Swift.min(a.count, b.count)
  if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
    var i = 0
    while i + 8 <= n {
      let x = UnsafeRawPointer(pa + i).loadUnaligned(as: UInt64.self)
      let y = UnsafeRawPointer(pb + i).loadUnaligned(as: UInt64.self)
      if x != y {
        // Big-endian puts the first byte in the most significant place,
        // so integer order is byte order.
        return x.bigEndian < y.bigEndian ? -1 : 1
      }
      i += 8
    }
    while i < n {
      if pa[i] != pb[i] { return pa[i] < pb[i] ? -1 : 1 }
      i += 1
    }
  }
  return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
