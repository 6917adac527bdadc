/// Writes JSON values as UTF-8 bytes, in Folio's canonical or compact form.
///
/// Both forms sort object keys by Unicode code point (by comparing UTF-8
/// bytes; Swift's `String <` would order by canonical equivalence instead),
/// write numbers as their literal text and non-ASCII text as is, and escape
/// only `"`, `\` and U+0000–U+001F. So equal values give equal bytes on every
/// replica.
///
/// The canonical form, for document files (docs/architecture.md),
/// has a 2-space indent, one member or element per line, `": "` after keys,
/// `[]` and `{}` when empty, and a trailing newline. The compact form has no
/// whitespace at all and no trailing newline, for NDJSON lines.
///
/// Several values can go into one buffer, for example an NDJSON batch:
///
/// ```swift
/// var writer = JSONWriter(reservingCapacity: 64 * 1024)
/// for op in ops {
///   writer.writeCompact(op)
///   writer.bytes.append(0x0A)
/// }
/// try file.write(writer.bytes)
/// ```
package struct JSONWriter {
  /// The bytes written so far.
  package var bytes: [UInt8]

  /// A writer with room for `capacity` bytes before it grows.
  package init(reservingCapacity capacity: Int = 1024) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  /// Appends `value` in canonical form, with its trailing newline.
  mutating func writeCanonical(_ value: JSONValue) {
    writeCanonical(value, depth: 0)
    bytes.append(0x0A)
  }

  /// Appends `value` in compact form: no whitespace, no trailing newline.
  mutating func writeCompact(_ value: JSONValue) {
    switch value {
    case .array(let elements):
      bytes.append(UInt8(ascii: "["))
      for (n, element) in elements.enumerated() {
        if n > 0 { bytes.append(UInt8(ascii: ",")) }
        writeCompact(element)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let object):
      bytes.append(UInt8(ascii: "{"))
      let members = object.members
      var first = true
      Self.forEachInKeyOrder(members) { index in
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        writeString(members[index].key)
        bytes.append(UInt8(ascii: ":"))
        writeCompact(members[index].value)
      }
      bytes.append(UInt8(ascii: "}"))
    default:
      writeScalar(value)
    }
  }

  private mutating func writeCanonical(_ value: JSONValue, depth: Int) {
    switch value {
    case .array(let elements):
      if elements.isEmpty {
        append("[]")
        return
      }
      bytes.append(UInt8(ascii: "["))
      for (n, element) in elements.enumerated() {
        if n > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(0x0A)
        indent(depth + 1)
        writeCanonical(element, depth: depth + 1)
      }
      bytes.append(0x0A)
      indent(depth)
      bytes.append(UInt8(ascii: "]"))
    case .object(let object):
      let members = object.members
      if members.isEmpty {
        append("{}")
        return
      }
      bytes.append(UInt8(ascii: "{"))
      var first = true
      Self.forEachInKeyOrder(members) { index in
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(0x0A)
        indent(depth + 1)
        writeString(members[index].key)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(UInt8(ascii: " "))
        writeCanonical(members[index].value, depth: depth + 1)
      }
      bytes.append(0x0A)
      indent(depth)
      bytes.append(UInt8(ascii: "}"))
    default:
      writeScalar(value)
    }
  }

  /// Calls `body` with the index of each member, in key order.
  @inline(__always)
  private static func forEachInKeyOrder(
    _ members: [(key: String, value: JSONValue)], _ body: (Int) -> Void
  ) {
    let count = members.count
    guard count > 1 else {
      if count == 1 { body(0) }
      return
    }
    // Sort on each key's first eight bytes as a big-endian integer, which
    // orders as the bytes do, and compare whole keys only when those tie.
    // Reading every key's bytes once beats borrowing two strings' storage
    // on every comparison.
    withUnsafeTemporaryAllocation(of: (prefix: UInt64, index: Int).self, capacity: count) {
      order in
      for k in 0..<count {
        order.initializeElement(at: k, to: (members[k].key.withUTF8Bytes(prefixWord), k))
      }
      func precedes(_ a: (prefix: UInt64, index: Int), _ b: (prefix: UInt64, index: Int)) -> Bool {
        if a.prefix != b.prefix { return a.prefix < b.prefix }
        return members[a.index].key.utf8Compare(members[b.index].key) < 0
      }
      // Objects that Folio wrote before are already in order: check first,
      // and sort only when needed.
      var sorted = true
      for k in 1..<count where !precedes(order[k - 1], order[k]) {
        sorted = false
        break
      }
      if !sorted {
        var buffer = order  // `sort` is declared mutating, even on a buffer
        buffer.sort(by: precedes)
      }
      for k in 0..<count { body(order[k].index) }
      // The elements are plain integers: nothing to deinitialize.
    }
  }

  /// The first eight bytes, big-endian, zero-padded: integer order on these
  /// is byte order on the prefixes.
  @inline(__always)
  private static func prefixWord(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    if bytes.count >= 8, let base = bytes.baseAddress {
      return UnsafeRawPointer(base).loadUnaligned(as: UInt64.self).bigEndian
    }
    var word: UInt64 = 0
    for k in 0..<8 { word = word << 8 | (k < bytes.count ? UInt64(bytes[k]) : 0) }
    return word
  }

  private mutating func writeScalar(_ value: JSONValue) {
    switch value {
    case .null: append("null")
    case .bool(let flag): append(flag ? "true" : "false")
    case .number(let text):
      // A malformed literal would write invalid JSON into a document file.
      precondition(
        JSONValue.isValidNumberLiteral(text), "not a JSON number literal: \(text)")
      text.withUTF8Bytes { bytes.append(contentsOf: $0) }
    case .string(let text): writeString(text)
    case .array, .object: preconditionFailure("not a scalar")
    }
  }

  /// Writes a quoted string, escaping only what JSON requires.
  package mutating func writeString(_ text: String) {
    bytes.append(UInt8(ascii: "\""))
    text.withUTF8Bytes { utf8 in
      var run = 0
      for k in 0..<utf8.count {
        let b = utf8[k]
        guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
        if run < k { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<k])) }
        run = k + 1
        bytes.append(UInt8(ascii: "\\"))
        switch b {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(b)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
          // \u00XX with lowercase hex, as the canonical form specifies.
          let digits: StaticString = "0123456789abcdef"
          bytes.append(UInt8(ascii: "u"))
          bytes.append(UInt8(ascii: "0"))
          bytes.append(UInt8(ascii: "0"))
          bytes.append(digits.utf8Start[Int(b >> 4)])
          bytes.append(digits.utf8Start[Int(b & 0x0F)])
        }
      }
      if run < utf8.count {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  @inline(__always)
  private mutating func indent(_ depth: Int) {
    for _ in 0..<(2 * depth) { bytes.append(UInt8(ascii: " ")) }
  }

  @inline(__always)
  private mutating func append(_ text: StaticString) {
    bytes.append(
      contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
  }
}
