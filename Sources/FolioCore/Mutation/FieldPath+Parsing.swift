import FolioSystem

extension FieldPath {
  /// A path as a person writes it on the command line: segments joined by
  /// `.`, where a segment between two backticks is taken whole, dots and
  /// spaces included (see the example). Outside backticks a segment is read
  /// as ``init(_:)-(String)`` reads it (`~1` for a `.`, `~0` for a `~`).
  ///
  /// ```swift
  /// try FieldPath(parsing: "`dep time`").segments     // ["dep time"]
  /// try FieldPath(parsing: "meta.`a.b`").segments     // ["meta", "a.b"]
  /// ```
  /// - Parameter source: what errors name as the file, such as `--select`.
  /// - Throws: `INVALID_QUERY` with the column of an empty segment or an
  ///   unterminated backtick.
  public init(parsing text: String, source: String = "<path>") throws {
    var reader = FieldPathReader(scalars: Array(text.unicodeScalars), source: source)
    let path = try reader.path(stoppingAt: nil)
    self = path
  }

  /// A comma-separated list of paths, as `--select` and `--columns` take
  /// it. A comma between backticks belongs to the segment; spaces around a
  /// segment outside backticks are not part of it, so `a, b` names `b`.
  ///
  /// ```swift
  /// try FieldPath.list(parsing: "a, b.c, `dep time`").count   // 3
  /// ```
  /// - Throws: `INVALID_QUERY` for an empty list or entry, or a path that
  ///   does not parse.
  public static func list(parsing text: String, source: String = "<paths>") throws -> [FieldPath] {
    var reader = FieldPathReader(scalars: Array(text.unicodeScalars), source: source)
    reader.trimsSpaces = true
    var paths: [FieldPath] = []
    repeat {
      paths.append(try reader.path(stoppingAt: ","))
    } while reader.consume(",")
    return paths
  }
}

extension FieldPath {
  /// The segment between the backtick at `scalars[start]` and the next
  /// one, and the index just past that one; nil when none closes it. The
  /// one reading of a backticked name, for paths and filters alike.
  package static func backtickedSegment(in scalars: [Unicode.Scalar], at start: Int) -> (String, end: Int)? {
    var i = start + 1
    var text = String.UnicodeScalarView()
    while i < scalars.count && scalars[i] != "`" {
      text.append(scalars[i])
      i += 1
    }
    guard i < scalars.count else { return nil }
    return (String(text), i + 1)
  }
}

/// Reads backtick-aware paths; positions count Unicode scalars, as the
/// other parsers' do.
private struct FieldPathReader {
  let scalars: [Unicode.Scalar]
  let source: String
  var i = 0
  /// Whether spaces around a segment are dropped (in a list, after `, `).
  var trimsSpaces = false

  mutating func consume(_ c: Unicode.Scalar) -> Bool {
    guard i < scalars.count, scalars[i] == c else { return false }
    i += 1
    return true
  }

  mutating func path(stoppingAt stop: Unicode.Scalar?) throws -> FieldPath {
    var segments: [String] = []
    repeat {
      segments.append(try segment(stoppingAt: stop))
    } while consume(".")
    if i < scalars.count && scalars[i] != stop {
      throw error("expected '.'\(stop.map { " or '\($0)'" } ?? "") after the backticked segment")
    }
    return FieldPath(segments)
  }

  private mutating func segment(stoppingAt stop: Unicode.Scalar?) throws -> String {
    if trimsSpaces { skipSpaces() }
    if i < scalars.count && scalars[i] == "`" {
      let start = i
      guard let (text, end) = FieldPath.backtickedSegment(in: scalars, at: i) else {
        throw error("unterminated `quoted` segment; close it with '`'")
      }
      i = end
      guard !text.isEmpty else {
        i = start
        throw error("empty segment: a path names a field in each part between dots")
      }
      if trimsSpaces { skipSpaces() }
      return String(text)
    }
    let start = i
    var text = String.UnicodeScalarView()
    while i < scalars.count && scalars[i] != "." && scalars[i] != stop {
      if scalars[i] == "`" {
        throw error("a backtick starts a segment; write `name` in backticks for a whole segment")
      }
      text.append(scalars[i])
      i += 1
    }
    if trimsSpaces {
      while let last = text.last, last.properties.isWhitespace { text.removeLast() }
    }
    guard !text.isEmpty else {
      i = start
      throw error(
        "empty segment: a path names a field in each part between dots; a name with a dot or a space goes in backticks, such as `dep time`"
      )
    }
    return FieldPath(String(text)).segments[0]
  }

  private mutating func skipSpaces() {
    while i < scalars.count && scalars[i].properties.isWhitespace { i += 1 }
  }

  private func error(_ message: String) -> FolioError {
    FolioError(.invalidQuery, message, location: .init(file: source, line: 1, column: i + 1))
  }
}
