import FolioSystem

extension JSONPointer {
  /// Where the value this pointer names starts in `bytes`, a JSON text that
  /// parses, and where its member name starts when it is an object member;
  /// nil when the text holds no such value. Errors about a value that was
  /// parsed (a schema violation, a bad keyword in a schema file) point an
  /// editor here, through `SourceText`.
  ///
  /// It walks the text without building values and without recursion:
  /// a skipped container is passed over by counting brackets outside
  /// strings, so the cost is one pass over the bytes before the value.
  func location(in bytes: [UInt8]) -> (key: Int?, value: Int)? {
    bytes.withUnsafeBufferPointer { buffer in
      Self.locate(tokens, in: UnsafeRawBufferPointer(buffer))
    }
  }

  /// The 1-based line and column of ``location(in:)`` (the member name when
  /// there is one, so that `"views": "10"` is pointed at `"views"` when
  /// `atKey`), or 1:1 when the text holds no such value.
  package func lineAndColumn(in bytes: [UInt8], atKey: Bool = false) -> (line: Int, column: Int) {
    guard let found = location(in: bytes) else { return (1, 1) }
    let offset = atKey ? (found.key ?? found.value) : found.value
    return bytes.withUnsafeBufferPointer { buffer in
      SourceText.lineAndColumn(of: offset, in: UnsafeRawBufferPointer(buffer))
    }
  }

  private static func locate(_ tokens: [String], in buffer: UnsafeRawBufferPointer) -> (
    key: Int?, value: Int
  )? {
    let end = buffer.count
    var i = JSONParser.skipWhitespace(in: buffer, from: 0)
    var key: Int?
    for token in tokens {
      guard i < end else { return nil }
      switch buffer[i] {
      case UInt8(ascii: "{"):
        i += 1
        var found = false
        while !found {
          i = JSONParser.skipWhitespace(in: buffer, from: i)
          guard i < end, buffer[i] == UInt8(ascii: "\"") else { return nil }  // '}' or not JSON
          let nameStart = i
          guard let nameEnd = skipString(buffer, from: i) else { return nil }
          let matches = memberName(buffer, nameStart, nameEnd) == token
          i = JSONParser.skipWhitespace(in: buffer, from: nameEnd)
          guard i < end, buffer[i] == UInt8(ascii: ":") else { return nil }
          i = JSONParser.skipWhitespace(in: buffer, from: i + 1)
          if matches {
            key = nameStart
            found = true
            continue
          }
          guard let next = skipValue(buffer, from: i) else { return nil }
          i = JSONParser.skipWhitespace(in: buffer, from: next)
          guard i < end, buffer[i] == UInt8(ascii: ",") else { return nil }
          i += 1
        }
      case UInt8(ascii: "["):
        guard let index = arrayIndex(token) else { return nil }
        i = JSONParser.skipWhitespace(in: buffer, from: i + 1)
        for _ in 0..<index {
          guard let next = skipValue(buffer, from: i) else { return nil }
          i = JSONParser.skipWhitespace(in: buffer, from: next)
          guard i < end, buffer[i] == UInt8(ascii: ",") else { return nil }
          i = JSONParser.skipWhitespace(in: buffer, from: i + 1)
        }
        guard i < end, buffer[i] != UInt8(ascii: "]") else { return nil }
        key = nil
      default:
        return nil
      }
    }
    return i < end ? (key, i) : nil
  }

  /// The decoded name of the string token at `start..<end` (quotes
  /// included); parsed as JSON only when it holds an escape.
  private static func memberName(_ buffer: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> String? {
    let slice = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
    if !slice.contains(UInt8(ascii: "\\")) {
      return String(decoding: UnsafeRawBufferPointer(rebasing: slice.dropFirst().dropLast()), as: UTF8.self)
    }
    return (try? JSONValue(parsing: slice))?.stringValue
  }

  /// The offset just past the string token that starts at `start`.
  private static func skipString(_ buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
    var i = start + 1
    while i < buffer.count {
      switch buffer[i] {
      case UInt8(ascii: "\\"): i += 2
      case UInt8(ascii: "\""): return i + 1
      default: i += 1
      }
    }
    return nil
  }

  /// The offset just past the value that starts at `start`.
  private static func skipValue(_ buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
    guard start < buffer.count else { return nil }
    switch buffer[start] {
    case UInt8(ascii: "\""):
      return skipString(buffer, from: start)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      var i = start
      while i < buffer.count {
        switch buffer[i] {
        case UInt8(ascii: "\""):
          guard let next = skipString(buffer, from: i) else { return nil }
          i = next
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["):
          depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          depth -= 1
          if depth == 0 { return i + 1 }
        default:
          break
        }
        i += 1
      }
      return nil
    default:
      var i = start
      while i < buffer.count {
        switch buffer[i] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: return i
        default: i += 1
        }
      }
      return i
    }
  }
}
