import FolioJSON
import FolioSystem
import Glibc

/// Buffered output to a file descriptor.
final class ByteSink {
  private let fd: Int32
  private let name: String
  private var buffer: [UInt8] = []

  init(fd: Int32, name: String) {
    self.fd = fd
    self.name = name
    buffer.reserveCapacity(1 << 20)
  }

  func write(_ bytes: [UInt8]) throws {
    buffer += bytes
    if buffer.count >= 1 << 20 { try flush() }
  }

  func write(_ text: String) throws { try write(Array(text.utf8)) }

  func flush() throws {
    guard !buffer.isEmpty else { return }
    try FileSystem.writeAll(fd, buffer, path: name)
    buffer.removeAll(keepingCapacity: true)
  }
}

/// One export format: rows go in one by one.
protocol ExportWriter: AnyObject {
  func write(_ document: JSONObject) throws
  func finish() throws
}

/// One compact JSON object per line.
final class NDJSONExportWriter: ExportWriter {
  private let sink: ByteSink
  init(sink: ByteSink) { self.sink = sink }
  func write(_ document: JSONObject) throws {
    var bytes = JSONValue.object(document).compactBytes()
    bytes.append(0x0A)
    try sink.write(bytes)
  }
  func finish() throws { try sink.flush() }
}

/// One JSON array, an element per line.
final class JSONArrayExportWriter: ExportWriter {
  private let sink: ByteSink
  private var first = true
  init(sink: ByteSink) { self.sink = sink }
  func write(_ document: JSONObject) throws {
    try sink.write(first ? "[\n" : ",\n")
    first = false
    try sink.write(JSONValue.object(document).compactBytes())
  }
  func finish() throws {
    try sink.write(first ? "[]\n" : "\n]\n")
    try sink.flush()
  }
}

/// CSV or TSV with a header row, records ended by LF (CRLF when asked).
/// Null (and a missing value) is the first of `nullValues`, else an empty
/// field; a string is quoted whenever it needs it or would otherwise read
/// back as another type (a number, `true`, `false`, empty, or one of
/// `nullValues`), so an import with type detection and the same null
/// values gives the same values back; nested arrays and objects are
/// written as JSON text (and come back as strings).
final class CSVExportWriter: ExportWriter {
  private let sink: ByteSink
  private let columns: [String]
  private let separator: UInt8
  private let null: [UInt8]
  private let nullValues: Set<[UInt8]>
  private let newline: [UInt8]

  init(sink: ByteSink, columns: [String], separator: UInt8, nullValues: [String] = [], crlf: Bool = false)
    throws
  {
    self.sink = sink
    self.columns = columns
    self.separator = separator
    null = nullValues.first.map { Array($0.utf8) } ?? []
    self.nullValues = Set(nullValues.map { Array($0.utf8) })
    newline = crlf ? [0x0D, 0x0A] : [0x0A]
    try sink.write(record(columns.map { field(.string($0), header: true) }))
  }

  private func field(_ value: JSONValue?, header: Bool) -> [UInt8] {
    Self.field(value, separator: separator, header: header, null: null, nullValues: nullValues)
  }

  private func record(_ fields: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = []
    for (i, field) in fields.enumerated() {
      if i > 0 { out.append(separator) }
      out += field
    }
    out += newline
    return out
  }

  func write(_ document: JSONObject) throws {
    try sink.write(record(columns.map { field(document[$0], header: false) }))
  }

  func finish() throws { try sink.flush() }

  /// One field's bytes, quoted as needed.
  static func field(
    _ value: JSONValue?, separator: UInt8, header: Bool, null: [UInt8] = [], nullValues: Set<[UInt8]> = []
  ) -> [UInt8] {
    switch value {
    case nil, .null?: return null
    case .bool(let flag)?: return Array((flag ? "true" : "false").utf8)
    case .number(let text)?: return Array(text.utf8)
    case .string(let text)?:
      let bytes = Array(text.utf8)
      let special = bytes.contains { $0 == separator || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
      // A header names a column and is never read as a value, but an empty
      // one would be refused.
      if header { return special || bytes.isEmpty ? Self.quoted(bytes) : bytes }
      let ambiguous =
        nullValues.contains(bytes)
        || { if case .string = CSVReader.inferredValue(text) { false } else { true } }()
      return special || ambiguous ? Self.quoted(bytes) : bytes
    case let nested?: return Self.quoted(nested.compactBytes())
    }
  }

  private static func quoted(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0x22]
    for b in bytes {
      if b == 0x22 { out.append(0x22) }
      out.append(b)
    }
    out.append(0x22)
    return out
  }
}
