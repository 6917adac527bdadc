extension JSONWriter {
  /// The compact form (``JSONValue/compactBytes()``) of a value given in
  /// canonical form (``JSONValue/canonicalBytes()``), without parsing it.
  ///
  /// Both forms come from the same writer and differ only in whitespace
  /// outside strings: the canonical form's indent, newlines and the space
  /// after each colon. Inside a string a space is kept; a newline or tab
  /// never appears there raw, since the writer escapes it.
  package static func compact(canonical: [UInt8]) -> [UInt8] {
    canonical.withUnsafeBytes { compact(canonical: $0) }
  }

  /// ``compact(canonical:)-([UInt8])`` of bytes in memory.
  package static func compact(canonical: UnsafeRawBufferPointer) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: canonical.count) { out, count in
      var n = 0
      var inString = false
      var escaped = false
      for byte in canonical {
        if inString {
          out[n] = byte
          n += 1
          if escaped {
            escaped = false
          } else if byte == UInt8(ascii: "\\") {
            escaped = true
          } else if byte == UInt8(ascii: "\"") {
            inString = false
          }
        } else if byte != UInt8(ascii: " ") && byte != 0x0A {
          if byte == UInt8(ascii: "\"") { inString = true }
          out[n] = byte
          n += 1
        }
      }
      count = n
    }
  }
}
