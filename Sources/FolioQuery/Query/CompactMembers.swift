/// Finds top-level members in compact JSON as Folio writes it (no
/// whitespace), without parsing the rest: strings are skipped to their
/// closing quote, containers by depth.
enum CompactMembers {
  private static let quote = UInt8(ascii: "\"")
  private static let backslash = UInt8(ascii: "\\")

  /// Calls `body` with the key bytes (between the quotes) and the value's
  /// range in `bytes` of each member of the object in `bytes`, in order,
  /// until `body` returns false (it has what it needs: the rest is not
  /// read).
  /// - Returns: false if the bytes are not a compact object, as far as they
  ///   were read (`body` may have seen some members by then).
  @inline(__always)
  static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Range<Int>) -> Bool)
    -> Bool
  {
    let n = bytes.count
    guard n >= 2, bytes[0] == UInt8(ascii: "{") else { return false }
    if bytes[1] == UInt8(ascii: "}") { return n == 2 }
    var i = 1
    while i < n {
      guard bytes[i] == quote, let keyEnd = skipString(bytes, i), keyEnd < n,
        bytes[keyEnd] == UInt8(ascii: ":")
      else {
        return false
      }
      let valueStart = keyEnd + 1
      guard valueStart < n, let j = skipValue(bytes, valueStart), j < n else { return false }
      if !body(UnsafeRawBufferPointer(rebasing: bytes[(i + 1)..<(keyEnd - 1)]), valueStart..<j) {
        return true
      }
      if bytes[j] == UInt8(ascii: "}") { return j == n - 1 }
      guard bytes[j] == UInt8(ascii: ",") else { return false }
      i = j + 1
    }
    return false
  }

  /// The index just past the string starting at `j` (a quote); nil if it
  /// does not end.
  @inline(__always)
  private static func skipString(_ bytes: UnsafeRawBufferPointer, _ j: Int) -> Int? {
    var k = j + 1
    let n = bytes.count
    while k < n {
      let byte = bytes[k]
      if byte == backslash {
        k += 2
        continue
      }
      if byte == quote { return k + 1 }
      k += 1
    }
    return nil
  }

  /// The index just past the value starting at `j`; nil if it does not end.
  @inline(__always)
  private static func skipValue(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> Int? {
    let n = bytes.count
    var j = start
    switch bytes[j] {
    case quote: return skipString(bytes, j)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      repeat {
        switch bytes[j] {
        case quote:
          guard let end = skipString(bytes, j) else { return nil }
          j = end
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
        default: break
        }
        j += 1
      } while depth > 0 && j < n
      return depth == 0 ? j : nil
    default:
      while j < n && bytes[j] != UInt8(ascii: ",") && bytes[j] != UInt8(ascii: "}") { j += 1 }
      return j
    }
  }
}
