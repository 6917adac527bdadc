import FolioSystem

/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// `JSONValue(parsing:)` is the usual way in. Use a parser directly to read
/// many values in a row, such as the lines of an NDJSON file: it keeps its
/// working storage between calls, and it reports error positions from a line
/// and column you give it.
///
/// It rejects everything RFC 8259 does not allow: comments, trailing commas,
/// `NaN` and `Infinity`, leading zeros, invalid escapes, lone surrogates,
/// invalid UTF-8, unescaped control characters, a byte order mark. It also
/// rejects duplicate object keys (compared by exact bytes) and nesting deeper
/// than ``maxDepth``. It never recurses, so hostile input cannot overflow
/// the stack.
///
/// Errors are `FolioError` values with code `.invalidJSON` and a 1-based
/// `file:line:column` location, the column counted in Unicode scalars. The
/// position is worked out only when an error is thrown, by rescanning the
/// input, so parsing valid input pays nothing for it.
///
/// Reading NDJSON, one buffer for the whole file:
///
/// ```swift
/// var parser = JSONParser(file: "rows.ndjson")
/// try bytes.withUnsafeBytes { buffer in
///   var start = 0
///   var line = 1
///   while start < buffer.count {
///     let end = buffer[start...].firstIndex(of: 0x0A) ?? buffer.count
///     parser.firstLine = line  // errors say rows.ndjson:LINE:COL
///     let row = try parser.parse(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
///     // use row
///     start = end + 1
///     line += 1
///   }
/// }
/// ```
///
/// Without slicing, ``parseValue(in:at:origin:)`` parses one value at an
/// offset and returns where it ended; positions are then counted from the
/// offset (or from `origin`), which is taken to be line ``firstLine``, column
/// ``firstColumn``.
package struct JSONParser {
  /// The nesting depth of arrays and objects accepted unless told otherwise.
  static let defaultMaxDepth = 512

  /// The file named in error locations; `"<input>"` when `nil`.
  var file: String?
  /// The line number of the first byte that positions are counted from.
  package var firstLine: Int
  /// The column number of the first byte that positions are counted from.
  package var firstColumn: Int
  /// The deepest nesting of arrays and objects accepted; one more is an
  /// error.
  var maxDepth: Int

  // Working storage, kept between calls so that parsing many small values
  // does not allocate it again each time. Open containers keep their
  // members here (an array's elements with empty keys) and move them out
  // when they close, which sizes each array and member list exactly once.
  // An object's key goes on as soon as it is read, with a `null` that its
  // value replaces.
  private var members: ParserStack<Member>
  // A cheap fingerprint of each key in `members` (0 for array elements),
  // so that the duplicate check compares integers, and bytes only when two
  // fingerprints match.
  private var prints: ParserStack<UInt64>
  private var frames: ParserStack<Frame>
  // Frees the stacks' memory; see `StackOwner`.
  private var owner: StackOwner
  // The key sets of open objects too big for a linear duplicate check.
  // Kept apart from `frames` so that a frame holds no reference.
  private var keySets: [Set<ExactKey>] = []
  // Bytes of a string that has escapes, being decoded.
  private var scratch: [UInt8] = []
  private var keyCache = JSONKeyCache()

  private typealias Member = (key: String, value: JSONValue)

  /// An open array or object.
  private struct Frame {
    var isObject: Bool
    /// Where this container's members start in `members`.
    var start: Int
    /// A 128-bit filter of the fingerprints of the keys seen so far: a key
    /// whose bit is clear is certainly new.
    var keyFilterLow: UInt64 = 0
    var keyFilterHigh: UInt64 = 0
    /// Where this object's key set is in `keySets`, once the object is too
    /// big for a linear duplicate check; -1 before.
    var keySet = -1
    /// The key cache's slot of this object's last key, to predict the next
    /// one; -1 before the first key.
    var lastKeySlot = -1
  }

  /// An error at a byte offset, before its line and column are known.
  struct Failure: Error {
    var offset: Int
    var message: String
    init(_ offset: Int, _ message: String) {
      self.offset = offset
      self.message = message
    }
  }

  /// Owns the memory of a parser's stacks, and frees it with the last
  /// parser copy that shares it.
  ///
  /// The parser works on its own copies of the stacks, which it hands back
  /// here after each call (a stack's memory moves when it grows). A parser
  /// that finds this shared with a copy of itself takes new stacks before
  /// it parses, so two copies never work on the same memory.
  private final class StackOwner {
    // Unchecked: only the parser that holds this alone (see `parseValue`)
    // touches these, and never two at once, so the runtime's exclusivity
    // checks, a call each, would guard nothing.
    @exclusivity(unchecked) var members = ParserStack<Member>(capacity: 64)
    @exclusivity(unchecked) var prints = ParserStack<UInt64>(capacity: 64)
    @exclusivity(unchecked) var frames = ParserStack<Frame>(capacity: 16)

    deinit {
      members.release()
      prints.release()
      frames.release()
    }
  }

  // Objects up to this many members check for duplicate keys by comparing
  // with each earlier key; bigger ones switch to a hash set. Documents are
  // mostly small, and a few comparisons beat hashing every key.
  private static let linearKeyLimit = 24

  /// A parser.
  ///
  /// - Parameters:
  ///   - file: The file named in error locations; `"<input>"` when `nil`.
  ///   - firstLine: The line number of the first byte parsed.
  ///   - firstColumn: The column number of the first byte parsed.
  ///   - maxDepth: The deepest nesting of arrays and objects accepted.
  package init(
    file: String? = nil, firstLine: Int = 1, firstColumn: Int = 1,
    maxDepth: Int = JSONParser.defaultMaxDepth
  ) {
    self.file = file
    self.firstLine = firstLine
    self.firstColumn = firstColumn
    self.maxDepth = maxDepth
    // The owner starts the stacks with room for a typical document, so
    // that they do not grow step by step on a one-off parse.
    owner = StackOwner()
    members = owner.members
    prints = owner.prints
    frames = owner.frames
  }

  /// Parses `buffer` as one JSON text: one value, with optional whitespace
  /// around it and nothing else.
  ///
  /// - Throws: `FolioError` with code `.invalidJSON`, located from the start
  ///   of `buffer` (line ``firstLine``, column ``firstColumn``).
  package mutating func parse(_ buffer: UnsafeRawBufferPointer) throws(FolioError) -> JSONValue {
    let (value, end) = try parseValue(in: buffer, at: 0)
    let rest = Self.skipWhitespace(in: buffer, from: end)
    if rest < buffer.count {
      let p = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
      let message =
        Self.isCommentStart(p, rest, buffer.count)
        ? "comments are not allowed in JSON" : "unexpected data after JSON value"
      throw makeError(Failure(rest, message), p, buffer.count, origin: 0)
    }
    return value
  }

  /// Parses `bytes` as one JSON text, like the buffer form of `parse(_:)`.
  mutating func parse(_ bytes: [UInt8]) throws(FolioError) -> JSONValue {
    try bytes.withUnsafeBufferPointer { (buffer) throws(FolioError) -> JSONValue in
      try parse(UnsafeRawBufferPointer(buffer))
    }
  }

  /// Parses one value that starts at `offset` in `buffer`, after optional
  /// whitespace.
  ///
  /// Whatever follows the value is left alone: the caller decides whether
  /// more data may follow (see ``skipWhitespace(in:from:)``).
  ///
  /// - Parameters:
  ///   - buffer: UTF-8 bytes.
  ///   - offset: Where to start, in `0...buffer.count`.
  ///   - origin: The byte that is line ``firstLine``, column ``firstColumn``
  ///     in error locations, at or before the error; `offset` when `nil`.
  /// - Returns: The value, and the offset just past its last byte.
  /// - Throws: `FolioError` with code `.invalidJSON`.
  mutating func parseValue(
    in buffer: UnsafeRawBufferPointer, at offset: Int, origin: Int? = nil
  ) throws(FolioError) -> (value: JSONValue, end: Int) {
    precondition(offset >= 0 && offset <= buffer.count, "offset outside the buffer")
    guard let raw = buffer.baseAddress else {
      // An empty buffer may have no address at all.
      throw FolioError(
        .invalidJSON, "empty input, expected a JSON value",
        location: .init(file: file ?? "<input>", line: firstLine, column: firstColumn))
    }
    // Bytes from `[UInt8]`, `String` or a file mapping are bound to UInt8
    // or untyped, so reading them as UInt8 is sound.
    let p = raw.assumingMemoryBound(to: UInt8.self)
    if !isKnownUniquelyReferenced(&owner) {
      // A copy of this parser has the same stacks.
      owner = StackOwner()
      members = owner.members
      prints = owner.prints
      frames = owner.frames
    }
    defer {
      owner.members = members
      owner.prints = prints
      owner.frames = frames
    }
    do {
      return try run(p, offset, buffer.count)
    } catch {
      // Drop the half-built containers, but keep the memory.
      members.removeAll()
      prints.removeAll()
      frames.removeAll()
      keySets.removeAll()
      throw makeError(error, p, buffer.count, origin: origin ?? offset)
    }
  }

  /// The offset of the first byte at or after `offset` that is not JSON
  /// whitespace (space, tab, line feed, carriage return), or `buffer.count`.
  package static func skipWhitespace(in buffer: UnsafeRawBufferPointer, from offset: Int) -> Int {
    guard let raw = buffer.baseAddress else { return offset }
    return skipWhitespace(raw.assumingMemoryBound(to: UInt8.self), offset, buffer.count)
  }

  private func makeError(
    _ failure: Failure, _ p: UnsafePointer<UInt8>, _ count: Int, origin: Int
  ) -> FolioError {
    let buffer = UnsafeRawBufferPointer(start: p, count: count)
    let (line, column) = SourceText.lineAndColumn(
      of: failure.offset, in: buffer, origin: origin, firstLine: firstLine, firstColumn: firstColumn)
    var error = FolioError(
      .invalidJSON, failure.message,
      location: .init(file: file ?? "<input>", line: line, column: column))
    error.excerpt = SourceText.excerpt(around: failure.offset, in: buffer)
    return error
  }
}

// MARK: - The value loop

extension JSONParser {
  /// Parses one value at `start`, iteratively: containers are opened on
  /// `frames` and closed as their end brackets arrive.
  ///
  /// One long function on purpose: it is the parser's hot loop (every
  /// byte of every document read passes through it), and keeping the
  /// cursor in a local across all value kinds is what runs at 184 MB/s
  /// (docs/benchmarks.md); split into calls, the cursor goes back to
  /// memory at each one.
  private mutating func run(
    _ p: UnsafePointer<UInt8>, _ start: Int, _ end: Int
  ) throws(Failure) -> (JSONValue, Int) {
    var i = Self.skipWhitespace(p, start, end)
    if i == end { throw Failure(i, "empty input, expected a JSON value") }

    nextValue: while true {
      i = Self.skipWhitespace(p, i, end)
      guard i < end else { throw Self.unexpected(p, i, end, expected: "a JSON value") }
      var value: JSONValue
      switch p[i] {
      case UInt8(ascii: "\""):
        value = .string(try parseString(p, &i, end))
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        value = .number(try Self.parseNumber(p, &i, end))
      case UInt8(ascii: "{"):
        try checkDepth(i)
        i = Self.skipWhitespace(p, i + 1, end)
        if i < end && p[i] == UInt8(ascii: "}") {
          i += 1
          value = .object(JSONObject())
        } else {
          frames.append(Frame(isObject: true, start: members.count))
          try parseKey(p, &i, end, commaAt: nil)
          continue nextValue
        }
      case UInt8(ascii: "["):
        try checkDepth(i)
        i = Self.skipWhitespace(p, i + 1, end)
        if i < end && p[i] == UInt8(ascii: "]") {
          i += 1
          value = .array([])
        } else {
          frames.append(Frame(isObject: false, start: members.count))
          continue nextValue
        }
      case UInt8(ascii: "t"):
        try Self.expectLiteral(p, &i, end, "true")
        value = .bool(true)
      case UInt8(ascii: "f"):
        try Self.expectLiteral(p, &i, end, "false")
        value = .bool(false)
      case UInt8(ascii: "n"):
        try Self.expectLiteral(p, &i, end, "null")
        value = .null
      default:
        throw Self.unexpected(p, i, end, expected: "a JSON value")
      }

      // Hand the value to its container; close every container the input
      // closes here, each becoming the value handed to the next one out.
      while true {
        guard frames.count > 0 else { return (value, i) }
        let isObject = frames[frames.count - 1].isObject
        if isObject {
          // Its key is on top, with a `null` in place of the value.
          members[members.count - 1].value = consume value
        } else {
          members.append((key: "", value: consume value))
          prints.append(0)
        }
        i = Self.skipWhitespace(p, i, end)
        let c: UInt8 = i < end ? p[i] : 0
        if isObject {
          if c == UInt8(ascii: ",") {
            let comma = i
            i += 1
            try parseKey(p, &i, end, commaAt: comma)
            continue nextValue
          }
          guard c == UInt8(ascii: "}") else {
            throw Self.unexpected(p, i, end, expected: "',' or '}' after object member")
          }
          i += 1
          value = closeObject()
        } else {
          if c == UInt8(ascii: ",") {
            let comma = i
            i = Self.skipWhitespace(p, i + 1, end)
            if i < end && p[i] == UInt8(ascii: "]") {
              throw Failure(comma, "trailing comma is not allowed before ']'")
            }
            continue nextValue
          }
          guard c == UInt8(ascii: "]") else {
            throw Self.unexpected(p, i, end, expected: "',' or ']' after array element")
          }
          i += 1
          value = closeArray()
        }
      }
    }
  }

  @inline(__always)
  private func checkDepth(_ i: Int) throws(Failure) {
    if frames.count >= maxDepth {
      throw Failure(i, "nesting is deeper than \(maxDepth) levels")
    }
  }

  /// Parses `"key" :` after `{` or `,`, and records the key.
  private mutating func parseKey(
    _ p: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int, commaAt comma: Int?
  ) throws(Failure) {
    i = Self.skipWhitespace(p, i, end)
    guard i < end && p[i] == UInt8(ascii: "\"") else {
      if let comma, i < end && p[i] == UInt8(ascii: "}") {
        throw Failure(comma, "trailing comma is not allowed before '}'")
      }
      throw Self.unexpected(
        p, i, end, expected: comma == nil ? "an object key or '}'" : "an object key after ','")
    }
    let open = i
    let f = frames.count - 1
    let previous = frames[f].lastKeySlot
    let key: String
    let print: UInt64
    if let known = keyCache.predictedKey(after: previous, p + open + 1, readable: end - open - 1) {
      // The same key as followed the previous one last time: no need to
      // scan or look it up.
      (key, print) = (known.key, known.print)
      frames[f].lastKeySlot = known.slot
      i = open + known.count + 2
    } else {
      var ascii = true
      let close = try Self.scanPlainString(p, open, end, ascii: &ascii)
      if p[close] == UInt8(ascii: "\"") {
        let found = keyCache.key(
          p + open + 1, count: close - open - 1, readable: end - open - 1, ascii: ascii,
          after: previous)
        (key, print) = (found.key, found.print)
        frames[f].lastKeySlot = found.slot
        i = close + 1
      } else {
        key = try parseEscapedString(p, &i, end, open: open, escapeAt: close)
        print = key.withUTF8Bytes(JSONKeyCache.fingerprint)
        frames[f].lastKeySlot = -1
      }
    }
    try addKey(key, print: print, at: open)
    i = Self.skipWhitespace(p, i, end)
    guard i < end && p[i] == UInt8(ascii: ":") else {
      throw Self.unexpected(p, i, end, expected: "':' after object key")
    }
    i += 1
  }

  /// Records `key` for the innermost object, rejecting a duplicate.
  @inline(__always)
  private mutating func addKey(
    _ key: consuming String, print: UInt64, at offset: Int
  ) throws(Failure) {
    let f = frames.count - 1
    let keyStart = frames[f].start
    if frames[f].keySet >= 0 {
      if !keySets[frames[f].keySet].insert(ExactKey(copy key)).inserted {
        throw Self.duplicate(key, offset)
      }
    } else {
      // The filter's bit comes from the top bits of the fingerprint, which
      // the key cache's fingerprint mixes best.
      let filterIndex = print >> 57
      let bit: UInt64 = 1 << (filterIndex & 63)
      let seen = filterIndex < 64 ? frames[f].keyFilterLow : frames[f].keyFilterHigh
      if seen & bit != 0 {
        // Perhaps seen before: compare with each earlier key.
        var j = keyStart
        while j < members.count {
          if prints[j] == print && members[j].key.utf8Equals(key) {
            throw Self.duplicate(key, offset)
          }
          j += 1
        }
      } else if filterIndex < 64 {
        frames[f].keyFilterLow |= bit
      } else {
        frames[f].keyFilterHigh |= bit
      }
      if members.count - keyStart >= Self.linearKeyLimit {
        // Past this, the filter fills up and the scans add up.
        var seen = Set<ExactKey>(minimumCapacity: 4 * Self.linearKeyLimit)
        for k in keyStart..<members.count { seen.insert(ExactKey(members[k].key)) }
        seen.insert(ExactKey(copy key))
        frames[f].keySet = keySets.count
        keySets.append(seen)
      }
    }
    members.append((key: consume key, value: .null))
    prints.append(print)
  }

  private static func duplicate(_ key: String, _ offset: Int) -> Failure {
    Failure(offset, "duplicate key '\(displayed(key))' in object")
  }

  // Closing a container moves its members out of the stack into the new
  // array, so that no reference count changes on the way.

  private mutating func closeArray() -> JSONValue {
    let start = frames.removeLast().start
    prints.removeAll(from: start)
    let elements = members.popAll(from: start) { source, count in
      // `reserveCapacity` and `append` are specialized here; the
      // unsafe-uninitialized initializer allocates through generic code
      // that looks up the storage type on each call.
      var elements: [JSONValue] = []
      elements.reserveCapacity(count)
      for k in 0..<count {
        // The key left behind is an empty string, which owns nothing.
        elements.append((source + k).move().value)
      }
      return elements
    }
    return .array(elements)
  }

  private mutating func closeObject() -> JSONValue {
    let frame = frames.removeLast()
    if frame.keySet >= 0 { keySets.removeLast() }
    prints.removeAll(from: frame.start)
    let elements = members.popAll(from: frame.start) { source, count in
      // As in `closeArray`.
      var elements: [Member] = []
      elements.reserveCapacity(count)
      for k in 0..<count { elements.append((source + k).move()) }
      return elements
    }
    return .object(JSONObject(uniqueMembers: elements))
  }
}

// MARK: - Scalars

extension JSONParser {
  @inline(__always)
  static func skipWhitespace(_ p: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Int {
    var i = start
    while i < end {
      let b = p[i]
      // Anything above space is not whitespace: one compare in the usual
      // case.
      if b > 0x20 { break }
      guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { break }
      i += 1
    }
    return i
  }

  /// Matches `true`, `false` or `null` at `i`.
  @inline(__always)
  private static func expectLiteral(
    _ p: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int, _ literal: StaticString
  ) throws(Failure) {
    let n = literal.utf8CodeUnitCount
    let text = literal.utf8Start
    if i + n <= end {
      var k = 1  // the first byte already matched
      while k < n && p[i + k] == text[k] { k += 1 }
      if k == n {
        i += n
        return
      }
    }
    throw Failure(i, "invalid literal, expected '\(literal)'")
  }

  /// Parses a number and returns its literal text.
  private static func parseNumber(
    _ p: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int
  ) throws(Failure) -> String {
    let start = i
    if p[i] == UInt8(ascii: "-") {
      i += 1
      guard i < end && isDigit(p[i]) else {
        if hasPrefix(p, i, end, "Infinity") {
          throw Failure(start, "-Infinity is not allowed in JSON")
        }
        throw unexpected(p, i, end, expected: "a digit after '-'")
      }
    }
    if p[i] == UInt8(ascii: "0") {
      i += 1
      if i < end && isDigit(p[i]) {
        throw Failure(start, "leading zeros are not allowed in numbers")
      }
    } else {
      while i < end && isDigit(p[i]) { i += 1 }
    }
    if i < end && p[i] == UInt8(ascii: ".") {
      i += 1
      guard i < end && isDigit(p[i]) else {
        throw unexpected(p, i, end, expected: "a digit after the decimal point")
      }
      while i < end && isDigit(p[i]) { i += 1 }
    }
    if i < end && p[i] | 0x20 == UInt8(ascii: "e") {
      i += 1
      if i < end && (p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-")) { i += 1 }
      guard i < end && isDigit(p[i]) else {
        throw unexpected(p, i, end, expected: "a digit in the exponent")
      }
      while i < end && isDigit(p[i]) { i += 1 }
    }
    return makeString(p + start, i - start, ascii: true)
  }

  @inline(__always)
  private static func isDigit(_ b: UInt8) -> Bool {
    b &- UInt8(ascii: "0") < 10
  }

  private static func hasPrefix(
    _ p: UnsafePointer<UInt8>, _ i: Int, _ end: Int, _ text: StaticString
  ) -> Bool {
    let n = text.utf8CodeUnitCount
    guard i + n <= end else { return false }
    for k in 0..<n where p[i + k] != text.utf8Start[k] { return false }
    return true
  }
}

// MARK: - Strings

extension JSONParser {
  /// Parses a string whose opening quote is at `i`.
  @inline(__always)
  private mutating func parseString(
    _ p: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int
  ) throws(Failure) -> String {
    let open = i
    var ascii = true
    let close = try Self.scanPlainString(p, open, end, ascii: &ascii)
    guard p[close] == UInt8(ascii: "\"") else {
      return try parseEscapedString(p, &i, end, open: open, escapeAt: close)
    }
    // No escapes: the bytes are the string, validated by the scan.
    i = close + 1
    return Self.makeString(p + open + 1, close - open - 1, ascii: ascii)
  }

  /// Scans the string whose opening quote is at `open`, checking its UTF-8,
  /// up to its closing quote or its first backslash, and returns where that
  /// is. Clears `ascii` if it passed a multi-byte sequence.
  @inline(__always)
  private static func scanPlainString(
    _ p: UnsafePointer<UInt8>, _ open: Int, _ end: Int, ascii: inout Bool
  ) throws(Failure) -> Int {
    var j = open + 1
    while true {
      // Skip eight plain ASCII bytes at a time: none of them a quote, a
      // backslash, a control character or part of a multi-byte sequence.
      while j + 8 <= end {
        let word = UInt64(littleEndian: UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self))
        let flags = attentionBits(word)
        if flags != 0 {
          // The lowest flag marks the first such byte exactly (see
          // `attentionBits`), so go straight to it.
          j += flags.trailingZeroBitCount >> 3
          break
        }
        j += 8
      }
      guard j < end else { throw Failure(open, "unterminated string") }
      let b = p[j]
      if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
        return j
      } else if b < 0x20 {
        throw controlCharacter(b, j)
      } else if b < 0x80 {
        j += 1
      } else {
        ascii = false
        j = try endOfUTF8Sequence(p, j, end)
      }
    }
  }

  /// A string of `count` bytes at `start`, which are known to be valid
  /// UTF-8 (all ASCII when `ascii`).
  ///
  /// `String(decoding:as:)` would check the bytes again. Short ASCII
  /// strings, most keys and values in documents, are built in place as
  /// small strings instead, which skips that check and any allocation.
  @inline(__always)
  static func makeString(_ start: UnsafePointer<UInt8>, _ count: Int, ascii: Bool) -> String {
    if ascii && count <= 15 {
      if count == 0 { return "" }
      return String(unsafeUninitializedCapacity: count) { buffer in
        // Two overlapping word copies instead of a call to memcpy; both
        // stay within the `count` bytes.
        let source = UnsafeRawPointer(start)
        let target = UnsafeMutableRawPointer(buffer.baseAddress!)
        if count >= 8 {
          target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
          target.storeBytes(
            of: source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self),
            toByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
          target.storeBytes(of: source.loadUnaligned(as: UInt32.self), as: UInt32.self)
          target.storeBytes(
            of: source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self),
            toByteOffset: count - 4, as: UInt32.self)
        } else {
          target.storeBytes(of: start[0], as: UInt8.self)
          target.storeBytes(of: start[count >> 1], toByteOffset: count >> 1, as: UInt8.self)
          target.storeBytes(of: start[count - 1], toByteOffset: count - 1, as: UInt8.self)
        }
        return count
      }
    }
    return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  }

  /// The high bit of each byte of `word` (little-endian) that is a quote, a
  /// backslash, below 0x20 or above 0x7F, and perhaps of some bytes after
  /// the first such one. Each test is the classic "has a zero byte" bit
  /// trick, which is exact about whether such a byte exists and about the
  /// first one: a false flag needs a borrow from a flagged byte below it.
  @inline(__always)
  private static func attentionBits(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    let hasQuote = (quotes &- ones) & ~quotes
    let hasBackslash = (backslashes &- ones) & ~backslashes
    let hasControl = (word &- ones &* 0x20) & ~word
    return (hasQuote | hasBackslash | hasControl | word) & highs
  }

  /// The slow path for a string with escapes, entered at the first
  /// backslash: decodes into `scratch`.
  private mutating func parseEscapedString(
    _ p: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int, open: Int, escapeAt first: Int
  ) throws(Failure) -> String {
    scratch.removeAll(keepingCapacity: true)
    scratch.append(contentsOf: UnsafeBufferPointer(start: p + open + 1, count: first - open - 1))
    var j = first
    while true {
      guard j < end else { throw Failure(open, "unterminated string") }
      let b = p[j]
      if b == UInt8(ascii: "\"") {
        i = j + 1
        return String(decoding: scratch, as: UTF8.self)
      } else if b == UInt8(ascii: "\\") {
        guard j + 1 < end else { throw Failure(open, "unterminated string") }
        let e = p[j + 1]
        switch e {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
          scratch.append(e)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
          let (scalar, length) = try Self.parseUnicodeEscape(p, j, end)
          appendUTF8(scalar)
          j += length
          continue
        default:
          throw Failure(j, "invalid escape '\\\(Self.displayed(p, j + 1, end))' in string")
        }
        j += 2
      } else if b < 0x20 {
        throw Self.controlCharacter(b, j)
      } else if b < 0x80 {
        // Copy a run of plain ASCII at once.
        let run = j
        j += 1
        while j < end {
          let c = p[j]
          if c < 0x20 || c >= 0x80 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { break }
          j += 1
        }
        scratch.append(contentsOf: UnsafeBufferPointer(start: p + run, count: j - run))
      } else {
        let next = try Self.endOfUTF8Sequence(p, j, end)
        scratch.append(contentsOf: UnsafeBufferPointer(start: p + j, count: next - j))
        j = next
      }
    }
  }

  /// Decodes `\uXXXX` at `j` (the backslash), or a surrogate pair
  /// `\uD83D\uDE00`, and returns the scalar and the number of bytes read.
  private static func parseUnicodeEscape(
    _ p: UnsafePointer<UInt8>, _ j: Int, _ end: Int
  ) throws(Failure) -> (UInt32, Int) {
    guard let unit = hex4(p, j + 2, end) else {
      throw Failure(j, "invalid escape '\\u' in string: expected 4 hex digits after '\\u'")
    }
    switch unit {
    case 0xD800...0xDBFF:
      // RFC 8259 §7: a character outside the BMP is a high surrogate
      // escape followed at once by a low one.
      if j + 7 < end && p[j + 6] == UInt8(ascii: "\\") && p[j + 7] == UInt8(ascii: "u"),
        let low = hex4(p, j + 8, end), (0xDC00...0xDFFF).contains(low)
      {
        return (0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), 12)
      }
      throw Failure(j, "lone surrogate \\u\(hex(unit)) in string")
    case 0xDC00...0xDFFF:
      throw Failure(j, "lone surrogate \\u\(hex(unit)) in string")
    default:
      return (unit, 6)
    }
  }

  private static func hex4(_ p: UnsafePointer<UInt8>, _ at: Int, _ end: Int) -> UInt32? {
    guard at + 4 <= end else { return nil }
    var value: UInt32 = 0
    for k in 0..<4 {
      let c = p[at + k]
      let digit: UInt8
      switch c {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
      default: return nil
      }
      value = value << 4 | UInt32(digit)
    }
    return value
  }

  private mutating func appendUTF8(_ scalar: UInt32) {
    switch scalar {
    case 0..<0x80:
      scratch.append(UInt8(scalar))
    case 0x80..<0x800:
      scratch.append(UInt8(0xC0 | scalar >> 6))
      scratch.append(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
      scratch.append(UInt8(0xE0 | scalar >> 12))
      scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
      scratch.append(UInt8(0x80 | scalar & 0x3F))
    default:
      scratch.append(UInt8(0xF0 | scalar >> 18))
      scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
      scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
      scratch.append(UInt8(0x80 | scalar & 0x3F))
    }
  }

  private static func controlCharacter(_ b: UInt8, _ at: Int) -> Failure {
    Failure(at, "unescaped control character U+\(hex(UInt32(b))) in string")
  }

  /// Checks the UTF-8 sequence that starts with the non-ASCII byte at `j`
  /// and returns the offset after it.
  ///
  /// Follows RFC 3629 §4: no overlong forms, no surrogates (U+D800–U+DFFF),
  /// nothing above U+10FFFF, no missing continuation bytes.
  static func endOfUTF8Sequence(
    _ p: UnsafePointer<UInt8>, _ j: Int, _ end: Int
  ) throws(Failure) -> Int {
    let lead = p[j]
    func fail(_ why: String) -> Failure {
      Failure(j, "invalid UTF-8 byte 0x\(hex(UInt32(lead), digits: 2)) (\(why))")
    }
    func isContinuation(_ k: Int) -> Bool { k < end && p[k] & 0xC0 == 0x80 }

    // The range the second byte must fall in, and the sequence length.
    let second: ClosedRange<UInt8>
    let length: Int
    switch lead {
    case 0x80...0xBF: throw fail("continuation byte without a lead byte")
    case 0xC0, 0xC1: throw fail("overlong encoding")
    case 0xC2...0xDF: (second, length) = (0x80...0xBF, 2)
    case 0xE0: (second, length) = (0xA0...0xBF, 3)
    case 0xED: (second, length) = (0x80...0x9F, 3)
    case 0xE1...0xEF: (second, length) = (0x80...0xBF, 3)
    case 0xF0: (second, length) = (0x90...0xBF, 4)
    case 0xF1...0xF3: (second, length) = (0x80...0xBF, 4)
    case 0xF4: (second, length) = (0x80...0x8F, 4)
    case 0xF5...0xF7: throw fail("encodes a code point above U+10FFFF")
    default: throw fail("never used in UTF-8")
    }
    guard isContinuation(j + 1) else { throw fail("truncated sequence") }
    let b1 = p[j + 1]
    if !second.contains(b1) {
      switch lead {
      case 0xE0, 0xF0: throw fail("overlong encoding")
      case 0xED: throw fail("encodes a UTF-16 surrogate")
      default: throw fail("encodes a code point above U+10FFFF")
      }
    }
    for k in 2..<length where !isContinuation(j + k) {
      throw fail("truncated sequence")
    }
    return j + length
  }
}

// MARK: - Messages

extension JSONParser {
  /// The error for something other than what was expected at `i`, naming
  /// what was found and catching the usual mistakes by name.
  static func unexpected(
    _ p: UnsafePointer<UInt8>, _ i: Int, _ end: Int, expected: String
  ) -> Failure {
    guard i < end else { return Failure(i, "expected \(expected), found end of input") }
    let b = p[i]
    if isCommentStart(p, i, end) {
      return Failure(i, "comments are not allowed in JSON")
    }
    if b == 0xEF && i + 2 < end && p[i + 1] == 0xBB && p[i + 2] == 0xBF {
      return Failure(
        i,
        "byte order mark (U+FEFF) is not allowed in JSON; save the file as UTF-8 without a BOM")
    }
    if b >= 0x80 {
      do {
        _ = try endOfUTF8Sequence(p, i, end)
      } catch {
        return error
      }
    }
    let word = wordAt(p, i, end)
    if word == "NaN" || word == "Infinity" {
      return Failure(i, "\(word) is not allowed in JSON")
    }
    if b == UInt8(ascii: "'") {
      return Failure(i, "expected \(expected), found ''' (JSON strings use double quotes)")
    }
    let found = word.isEmpty ? "'\(displayed(p, i, end))'" : "'\(word)'"
    return Failure(i, "expected \(expected), found \(found)")
  }

  static func isCommentStart(_ p: UnsafePointer<UInt8>, _ i: Int, _ end: Int) -> Bool {
    i + 1 < end && p[i] == UInt8(ascii: "/")
      && (p[i + 1] == UInt8(ascii: "/") || p[i + 1] == UInt8(ascii: "*"))
  }

  /// The run of ASCII letters and digits at `i`, to name a bare word like
  /// `True` or `undefined` in a message; empty if there is none.
  private static func wordAt(_ p: UnsafePointer<UInt8>, _ i: Int, _ end: Int) -> String {
    var k = i
    while k < end && k - i < 32 {
      let c = p[k] | 0x20
      guard (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || isDigit(p[k]) else { break }
      k += 1
    }
    guard k > i, !isDigit(p[i]) else { return "" }
    return String(decoding: UnsafeBufferPointer(start: p + i, count: k - i), as: UTF8.self)
  }

  /// The character at `i`, for a message: itself when printable, `U+XXXX`
  /// when a control character, `0xXX` when not valid UTF-8.
  private static func displayed(_ p: UnsafePointer<UInt8>, _ i: Int, _ end: Int) -> String {
    guard i < end else { return "" }
    let b = p[i]
    if b < 0x80 {
      return b < 0x20 || b == 0x7F ? "U+\(hex(UInt32(b)))" : String(UnicodeScalar(b))
    }
    guard let next = try? endOfUTF8Sequence(p, i, end) else {
      return "0x\(hex(UInt32(b), digits: 2))"
    }
    return displayed(
      String(decoding: UnsafeBufferPointer(start: p + i, count: next - i), as: UTF8.self))
  }

  /// `text` for a message: control characters spelled out, and cut short
  /// when long.
  static func displayed(_ text: String) -> String {
    var result = ""
    for (n, scalar) in text.unicodeScalars.enumerated() {
      if n == 60 {
        result += "…"
        break
      }
      if scalar.value < 0x20 || scalar.value == 0x7F {
        result += "U+\(hex(scalar.value))"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// Uppercase hex, zero-padded to `digits`.
  static func hex(_ value: UInt32, digits: Int = 4) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: Swift.max(0, digits - text.count)) + text
  }
}
