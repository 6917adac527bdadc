import FolioJSON
import FolioSystem

/// Reads a JSON array element by element, or a JSON object whose values are
/// objects member by member (the shape of a Firebase export,
/// `{"id1": {...}, "id2": {...}}`, where each key is its document's pk),
/// without loading either whole.
///
/// A light scanner finds where each element ends (tracking strings and
/// nesting), then the strict parser reads just that element. So a malformed
/// element, or a member whose value is not an object, is a bad row that
/// `--continue` can skip, while broken structure between elements (a
/// missing comma, no closing bracket) ends the import.
final class JSONArrayReader: RowReader {
  private let stream: ByteStream
  private var parser: JSONParser
  /// Line and column of `stream.start`.
  private var line = 1
  private var column = 1
  private var state = State.beforeArray
  /// Whether the input is an object keyed by pk rather than an array.
  private var keyed = false

  private enum State {
    case beforeArray
    case beforeElement(first: Bool)
    case done
  }

  init(stream: ByteStream) {
    self.stream = stream
    parser = JSONParser(file: stream.name)
  }

  var name: String { stream.name }
  var progress: (done: Int, total: Int?) { (stream.position, stream.totalSize) }

  private func error(_ message: String) -> FolioError {
    FolioError(.invalidJSON, message, location: .init(file: name, line: line, column: column))
  }

  /// Consumes bytes up to `index`, keeping line and column.
  private func advance(to index: Int) {
    for i in stream.start..<index {
      if stream.buffer[i] == 0x0A {
        line += 1
        column = 1
      } else if stream.buffer[i] & 0xC0 != 0x80 {
        column += 1
      }
    }
    stream.consume(upTo: index)
  }

  /// Skips whitespace; returns the next byte, or nil at end of file.
  private func peek() throws -> UInt8? {
    while true {
      var i = stream.start
      while i < stream.end {
        switch stream.buffer[i] {
        case 0x20, 0x09, 0x0A, 0x0D: i += 1
        default:
          advance(to: i)
          return stream.buffer[i]
        }
      }
      advance(to: i)
      if try stream.fill() == nil { return nil }
    }
  }

  func next() throws -> RowEvent? {
    while true {
      switch state {
      case .done:
        return nil
      case .beforeArray:
        try stream.skipByteOrderMark()
        guard let byte = try peek() else { throw error("empty input, expected a JSON array") }
        guard byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") else {
          throw error(
            "expected '[' to start a JSON array, or '{' to start an object keyed by pk "
              + "(for one object per line, use --format ndjson)")
        }
        keyed = byte == UInt8(ascii: "{")
        advance(to: stream.start + 1)
        state = .beforeElement(first: true)
      case .beforeElement(let first):
        let close = keyed ? UInt8(ascii: "}") : UInt8(ascii: "]")
        let whole = keyed ? "object" : "array"
        guard let byte = try peek() else {
          throw error(
            "unexpected end of file, expected '\(Character(Unicode.Scalar(close)))' to end the \(whole)")
        }
        if byte == close {
          advance(to: stream.start + 1)
          if try peek() != nil { throw error("unexpected data after the JSON \(whole)") }
          state = .done
          return nil
        }
        if !first {
          guard byte == UInt8(ascii: ",") else {
            throw error(
              keyed
                ? "expected ',' or '}' after an object member" : "expected ',' or ']' after an array element")
          }
          advance(to: stream.start + 1)
          guard try peek() != nil else {
            throw error("unexpected end of file, expected an \(keyed ? "object member" : "array element")")
          }
        }
        state = .beforeElement(first: false)
        let key = keyed ? try memberKey() : nil
        let length = try elementLength()
        let startLine = line
        parser.firstLine = line
        parser.firstColumn = column
        let from = stream.start
        let event: RowEvent
        do {
          let value = try stream.buffer.withUnsafeBytes { (raw) throws(FolioError) -> JSONValue in
            try parser.parse(UnsafeRawBufferPointer(rebasing: raw[from..<(from + length)]))
          }
          if let key {
            if case .object = value {
              event = .keyedRow(key: key, value, line: startLine)
            } else {
              event = .bad(
                FolioError(
                  .invalidDocument,
                  "the value of member '\(key)' must be an object (one document), not \(value.kindName)",
                  location: .init(file: name, line: startLine, column: parser.firstColumn)))
            }
          } else {
            event = .row(value, line: startLine)
          }
        } catch {
          event = .bad(error as? FolioError ?? FolioError(.invalidJSON, "\(error)"))
        }
        advance(to: from + length)
        return event
      }
    }
  }

  /// Reads a member's key and the `:` after it, leaving the window at the
  /// member's value. A key that is not a string ends the import: without
  /// it there is no telling where the next member starts.
  private func memberKey() throws -> String {
    guard try peek() == UInt8(ascii: "\"") else {
      throw error("expected a string key (a document's pk) in the JSON object")
    }
    var escaped = false
    var i = stream.start + 1
    scan: while true {
      while i < stream.end {
        let b = stream.buffer[i]
        i += 1
        if escaped {
          escaped = false
        } else if b == UInt8(ascii: "\\") {
          escaped = true
        } else if b == UInt8(ascii: "\"") {
          break scan
        }
      }
      guard let shift = try stream.fill() else {
        throw error("unexpected end of file inside a member's key; the string is not closed")
      }
      i -= shift
    }
    parser.firstLine = line
    parser.firstColumn = column
    let from = stream.start
    let value = try stream.buffer.withUnsafeBytes { (raw) throws(FolioError) -> JSONValue in
      try parser.parse(UnsafeRawBufferPointer(rebasing: raw[from..<i]))
    }
    guard case .string(let key) = value else { throw error("expected a string key in the JSON object") }
    advance(to: i)
    guard try peek() == UInt8(ascii: ":") else { throw error("expected ':' after the key '\(key)'") }
    advance(to: stream.start + 1)
    guard try peek() != nil else { throw error("unexpected end of file, expected the value of '\(key)'") }
    return key
  }

  /// The byte length of the element at the window's start: up to the first
  /// `,` or `]` outside strings at nesting depth zero. Reads more as needed.
  private func elementLength() throws -> Int {
    var depth = 0
    var inString = false
    var escaped = false
    var i = stream.start
    while true {
      while i < stream.end {
        let b = stream.buffer[i]
        if inString {
          if escaped {
            escaped = false
          } else if b == UInt8(ascii: "\\") {
            escaped = true
          } else if b == UInt8(ascii: "\"") {
            inString = false
          }
        } else {
          switch b {
          case UInt8(ascii: "\""): inString = true
          case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
          case UInt8(ascii: "]"), UInt8(ascii: "}"):
            if depth == 0 { return i - stream.start }
            depth -= 1
          case UInt8(ascii: ","):
            if depth == 0 { return i - stream.start }
          default: break
          }
        }
        i += 1
      }
      guard let shift = try stream.fill() else {
        throw error(
          keyed
            ? "unexpected end of file inside an object member; the object is not closed"
            : "unexpected end of file inside an array element; the array is not closed")
      }
      i -= shift
    }
  }
}
