import FolioJSON
import FolioSystem
import Glibc

/// Reads newline-delimited JSON one line at a time. A line that does not
/// parse is a bad row at `FILE:LINE:COL`; blank lines are skipped.
final class NDJSONReader: RowReader {
  private let stream: ByteStream
  private var parser: JSONParser
  private var line = 0

  init(stream: ByteStream) {
    self.stream = stream
    parser = JSONParser(file: stream.name)
  }

  var name: String { stream.name }
  var progress: (done: Int, total: Int?) { (stream.position, stream.totalSize) }

  func next() throws -> RowEvent? {
    while true {
      var scanFrom = stream.start
      var newline: Int?
      while true {
        newline = stream.buffer.withUnsafeBytes { raw -> Int? in
          guard stream.end > scanFrom else { return nil }
          let p = raw.baseAddress! + scanFrom
          guard let hit = memchr(p, 0x0A, stream.end - scanFrom) else { return nil }
          return UnsafeRawPointer(hit) - UnsafeRawPointer(raw.baseAddress!)
        }
        if newline != nil { break }
        let scanned = stream.end - stream.start
        guard let shift = try stream.fill() else { break }
        scanFrom = stream.start + scanned
        _ = shift
      }
      let lineStart = stream.start
      let lineEnd = newline ?? stream.end
      if newline == nil && lineStart == lineEnd { return nil }
      line += 1
      if line == 1 { skipBOM(lineEnd) }
      let from = stream.start
      defer { stream.consume(upTo: newline.map { $0 + 1 } ?? lineEnd) }
      let blank = stream.buffer.withUnsafeBytes { raw in
        JSONParser.skipWhitespace(in: UnsafeRawBufferPointer(rebasing: raw[from..<lineEnd]), from: 0)
          == lineEnd - from
      }
      if blank { continue }
      parser.firstLine = line
      parser.firstColumn = 1
      do {
        let value = try stream.buffer.withUnsafeBytes { (raw) throws(FolioError) -> JSONValue in
          try parser.parse(UnsafeRawBufferPointer(rebasing: raw[from..<lineEnd]))
        }
        return .row(value, line: line)
      } catch {
        return .bad(error as? FolioError ?? FolioError(.invalidJSON, "\(error)"))
      }
    }
  }

  private func skipBOM(_ lineEnd: Int) {
    let s = stream.start
    if lineEnd - s >= 3, stream.buffer[s] == 0xEF, stream.buffer[s + 1] == 0xBB, stream.buffer[s + 2] == 0xBF
    {
      stream.consume(3)
    }
  }
}
