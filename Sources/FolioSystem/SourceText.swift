/// Positions in source text, and the excerpt a compiler prints under an
/// error: the offending line with a caret under the column.
///
/// JSON, YAML and the stores' own checks all report `file:line:col`; they
/// count lines and columns here, one way: a line ends at `\n`, `\r\n` or a
/// lone `\r`, and a column counts Unicode scalars.
package enum SourceText {
  /// The widest excerpt printed. A longer line (minified JSON is one line)
  /// is cut to a window around the column.
  static let excerptWidth = 96

  /// The line and column of the byte at `offset`, counting from `origin` as
  /// line `firstLine`, column `firstColumn`.
  package static func lineAndColumn(
    of offset: Int, in buffer: UnsafeRawBufferPointer, origin: Int = 0,
    firstLine: Int = 1, firstColumn: Int = 1
  ) -> (line: Int, column: Int) {
    var line = firstLine
    var column = firstColumn
    var k = Swift.max(0, origin)
    let stop = Swift.min(offset, buffer.count)
    while k < stop {
      let b = buffer[k]
      if b == 0x0A {
        line += 1
        column = 1
      } else if b == 0x0D {
        // "\r\n" counts once, at the "\n".
        if !(k + 1 < buffer.count && buffer[k + 1] == 0x0A) {
          line += 1
          column = 1
        }
      } else if b & 0xC0 != 0x80 {
        // Every byte but a UTF-8 continuation byte starts a scalar.
        column += 1
      }
      k += 1
    }
    return (line, column)
  }

  /// The line holding the byte at `offset`, and under it a caret at that
  /// byte's column.
  package static func excerpt(around offset: Int, in buffer: UnsafeRawBufferPointer) -> String {
    let offset = Swift.max(0, Swift.min(offset, buffer.count))
    var start = offset
    while start > 0 && buffer[start - 1] != 0x0A && buffer[start - 1] != 0x0D { start -= 1 }
    var end = offset
    while end < buffer.count && buffer[end] != 0x0A && buffer[end] != 0x0D { end += 1 }
    let before = scalars(buffer, start, offset)
    let after = scalars(buffer, offset, end)
    return render(before: before, after: after)
  }

  /// The excerpt for a 1-based `line` and `column` (in scalars), or nil when
  /// the text has no such line.
  package static func excerpt(line: Int, column: Int, in buffer: UnsafeRawBufferPointer) -> String? {
    guard let range = lineRange(line, in: buffer) else { return nil }
    let text = scalars(buffer, range.lowerBound, range.upperBound)
    let split = Swift.max(0, Swift.min(column - 1, text.count))
    return render(before: Array(text[..<split]), after: Array(text[split...]))
  }

  /// The bytes of 1-based line `line`, without its line break, or nil
  /// when the text has no such line.
  package static func lineRange(_ line: Int, in buffer: UnsafeRawBufferPointer) -> Range<Int>? {
    guard line >= 1 else { return nil }
    var start = 0
    var current = 1
    while current < line {
      guard start < buffer.count else { return nil }
      let b = buffer[start]
      start += 1
      if b == 0x0A || (b == 0x0D && !(start < buffer.count && buffer[start] == 0x0A)) {
        current += 1
      }
    }
    guard start <= buffer.count else { return nil }
    var end = start
    while end < buffer.count && buffer[end] != 0x0A && buffer[end] != 0x0D { end += 1 }
    return start..<end
  }

  private static func scalars(_ buffer: UnsafeRawBufferPointer, _ from: Int, _ to: Int) -> [Unicode.Scalar] {
    Array(String(decoding: UnsafeRawBufferPointer(rebasing: buffer[from..<to]), as: UTF8.self).unicodeScalars)
  }

  /// Two lines: the text, cut to ``excerptWidth`` around the split, and a
  /// caret under the split. Tabs stay tabs in the caret line, so the caret
  /// lines up in a terminal; other control characters print as spaces.
  private static func render(before: [Unicode.Scalar], after: [Unicode.Scalar]) -> String {
    let half = excerptWidth / 2
    var head = before[...]
    var tail = after[...]
    var lead = ""
    var trail = ""
    if head.count + tail.count > excerptWidth {
      if head.count > half {
        head = head.suffix(Swift.max(half, excerptWidth - tail.count))
        lead = "…"
      }
      if head.count + tail.count > excerptWidth {
        tail = tail.prefix(excerptWidth - head.count)
        trail = "…"
      }
    }
    var line = lead
    var caret = lead.isEmpty ? "" : " "
    for scalar in head {
      if scalar == "\t" {
        line.unicodeScalars.append(scalar)
        caret += "\t"
      } else {
        line.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
        caret += " "
      }
    }
    for scalar in tail {
      line.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
    }
    return line + trail + "\n" + caret + "^"
  }
}

extension FolioError {
  /// The same error with its ``excerpt`` taken from `bytes`, the text its
  /// location points into; unchanged when it has an excerpt or no location.
  package func withExcerpt(from bytes: some Collection<UInt8>) -> FolioError {
    guard excerpt == nil, let location else { return self }
    var copy = self
    copy.excerpt = Array(bytes).withUnsafeBytes {
      SourceText.excerpt(line: location.line, column: location.column, in: $0)
    }
    return copy
  }
}
