extension Array where Element == UInt8 {
  /// Appends `value` in little-endian byte order, the order of every number
  /// in Folio's own binary files (the index base, the packed cache, its
  /// saved check, an import's notes), whatever the machine's.
  @inlinable package mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
    Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
  }
}

extension UnsafeRawBufferPointer {
  /// The number stored little-endian at `offset` (see
  /// ``Swift/Array/appendLittleEndian(_:)``), at any alignment.
  @inlinable package func loadLittleEndian<T: FixedWidthInteger>(fromByteOffset offset: Int, as type: T.Type)
    -> T
  {
    T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
  }
}
