import FolioCore
import FolioJSON
import FolioSystem

/// Reads CSV or TSV by RFC 4180: a header row names the columns; fields may
/// be quoted, with `""` for a quote and with separators and newlines inside;
/// records end in LF or CRLF; a UTF-8 byte order mark is skipped.
///
/// Types: with detection on, an unquoted field that is a JSON integer or
/// decimal becomes that number (its text kept exactly, never converted to
/// a float), `true`/`false` become booleans, and an empty unquoted field
/// becomes null. A quoted field is always a string, so `"007"` and `""` stay
/// strings; the CSV writer quotes such strings for the round trip. With
/// detection off, every field is a string.
///
/// An unquoted field spelled as one of `nullValues` (`NA`, `\N`, `-`) is
/// null whether or not types are detected; a quoted one stays a string, as
/// every quoted field does, so the writer can quote a string `"NA"` to keep
/// it apart from a null.
final class CSVReader: RowReader {
  private let stream: ByteStream
  private let separator: UInt8
  private let detectTypes: Bool
  /// Unquoted field texts that read as null, by their bytes.
  private let nullValues: Set<[UInt8]>
  private var header: [String]?
  /// The physical line the next record starts on.
  private var line = 1
  private var startedBOM = false

  /// One field as read: its bytes, and whether it was quoted.
  struct Field {
    var bytes: [UInt8]
    var quoted: Bool
  }

  init(stream: ByteStream, separator: UInt8, detectTypes: Bool, nullValues: [String] = []) {
    self.stream = stream
    self.separator = separator
    self.detectTypes = detectTypes
    self.nullValues = Set(nullValues.map { Array($0.utf8) })
  }

  var name: String { stream.name }
  /// The header row's names, in the file's order, once the first row is read.
  var headerColumns: [String]? { header }
  var progress: (done: Int, total: Int?) { (stream.position, stream.totalSize) }

  private func error(_ message: String, line: Int, column: Int = 1) -> FolioError {
    FolioError(.invalidDocument, message, location: .init(file: name, line: line, column: column))
  }

  func next() throws -> RowEvent? {
    if header == nil {
      if !startedBOM {
        startedBOM = true
        try stream.skipByteOrderMark()
      }
      guard let (fields, headerLine) = try readRecord() else {
        throw error("the file is empty; CSV input needs a header row naming the columns", line: 1)
      }
      var names: [String] = []
      // By bytes: "\u{E9}" and "e\u{301}" are two columns (issue 13).
      var seen = Set<ExactKey>()
      for (index, field) in fields.enumerated() {
        let name = String(decoding: field.bytes, as: UTF8.self)
        if name.isEmpty {
          throw error("column \(index + 1) of the header row has no name", line: headerLine)
        }
        if !seen.insert(ExactKey(name)).inserted {
          throw error("the header row names column '\(name)' twice", line: headerLine)
        }
        names.append(name)
      }
      header = names
    }
    let columns = header!
    while true {
      guard let (fields, recordLine) = try readRecord() else { return nil }
      // A blank line between records is not a row.
      if fields.count == 1 && fields[0].bytes.isEmpty && !fields[0].quoted && columns.count > 1 { continue }
      if fields.count != columns.count {
        return .bad(
          error(
            "row has \(fields.count) field\(fields.count == 1 ? "" : "s") but the header has \(columns.count)",
            line: recordLine))
      }
      var object = JSONObject()
      for (index, field) in fields.enumerated() {
        if !field.quoted && !nullValues.isEmpty && nullValues.contains(field.bytes) {
          object[columns[index]] = .null
          continue
        }
        guard let text = String(validating: field.bytes, as: UTF8.self) else {
          return .bad(error("field '\(columns[index])' is not valid UTF-8", line: recordLine))
        }
        object[columns[index]] = value(text, quoted: field.quoted)
      }
      return .row(.object(object), line: recordLine)
    }
  }

  /// The JSON value of a field.
  func value(_ text: String, quoted: Bool) -> JSONValue {
    if quoted || !detectTypes { return .string(text) }
    return CSVReader.inferredValue(text)
  }

  /// An unquoted field's value when types are detected.
  static func inferredValue(_ text: String) -> JSONValue {
    if text.isEmpty { return .null }
    if text == "true" { return .bool(true) }
    if text == "false" { return .bool(false) }
    if isJSONNumber(text) { return .number(text) }
    return .string(text)
  }

  /// Whether `text` is a JSON number literal (no leading zeros, no `+`).
  static func isJSONNumber(_ text: String) -> Bool {
    var bytes = text.utf8.makeIterator()
    var b = bytes.next()
    func digit(_ x: UInt8?) -> Bool { x.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
    if b == UInt8(ascii: "-") { b = bytes.next() }
    guard digit(b) else { return false }
    if b == UInt8(ascii: "0") {
      b = bytes.next()
    } else {
      while digit(b) { b = bytes.next() }
    }
    if b == UInt8(ascii: ".") {
      b = bytes.next()
      guard digit(b) else { return false }
      while digit(b) { b = bytes.next() }
    }
    if b == UInt8(ascii: "e") || b == UInt8(ascii: "E") {
      b = bytes.next()
      if b == UInt8(ascii: "+") || b == UInt8(ascii: "-") { b = bytes.next() }
      guard digit(b) else { return false }
      while digit(b) { b = bytes.next() }
    }
    return b == nil
  }

  /// Reads one record's fields, or nil at end of file.
  ///
  /// One long function on purpose: it is the CSV import's hot loop, which
  /// walks every byte with the cursor and the field's state in locals
  /// (quoted or not, where it started, whether it needs unescaping).
  private func readRecord() throws -> ([Field], Int)? {
    var i = stream.start
    if i == stream.end {
      guard try stream.fill() != nil, stream.end > stream.start else { return nil }
      i = stream.start
    }
    let recordLine = line
    var fields: [Field] = []
    /// The bytes of `fields`, and one for each separator.
    var fieldBytes = 0
    var current: [UInt8] = []
    var quoted = false
    var inQuotes = false
    var afterQuote = false
    let quote = UInt8(ascii: "\"")
    while true {
      if i == stream.end {
        let consumed = i
        stream.consume(upTo: consumed)
        // The record is copied out of the window as it is read, so the
        // window stays small: its own size (a separator counted for each
        // field, so that a line of commas is bounded too) must be.
        if let limit = stream.recordLimit, current.count + fieldBytes > limit {
          throw stream.recordTooLarge("the record of line \(recordLine)", at: stream.position)
        }
        guard try stream.fill() != nil else {
          // End of file ends the last record.
          if inQuotes {
            throw error("a quoted field is not closed before the end of the file", line: recordLine)
          }
          fields.append(Field(bytes: current, quoted: quoted))
          return (fields, recordLine)
        }
        i = stream.start
        continue
      }
      let b = stream.buffer[i]
      i += 1
      if inQuotes {
        if b == quote {
          inQuotes = false
          afterQuote = true
        } else {
          if b == 0x0A { line += 1 }
          current.append(b)
        }
        continue
      }
      if b == quote {
        if afterQuote {
          // `""` inside a quoted field is one quote.
          current.append(quote)
          inQuotes = true
          afterQuote = false
        } else if current.isEmpty && !quoted {
          quoted = true
          inQuotes = true
        } else {
          current.append(b)  // a stray quote inside an unquoted field is kept, as most readers do
        }
        continue
      }
      afterQuote = false
      if b == separator {
        fields.append(Field(bytes: current, quoted: quoted))
        fieldBytes += current.count + 1
        current = []
        quoted = false
      } else if b == 0x0A || b == 0x0D {
        if b == 0x0D {
          if i == stream.end {
            stream.consume(upTo: i)
            if try stream.fill() != nil { i = stream.start }
          }
          if i < stream.end && stream.buffer[i] == 0x0A { i += 1 }
        }
        line += 1
        fields.append(Field(bytes: current, quoted: quoted))
        stream.consume(upTo: i)
        return (fields, recordLine)
      } else {
        current.append(b)
      }
    }
  }
}
