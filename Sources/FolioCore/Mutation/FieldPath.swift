/// A path to a value inside a document: the column, then member names of
/// nested objects.
///
/// Its text form joins the segments with `.`; a segment's own `~` and `.` are
/// written `~0` and `~1` (as in JSON Pointer), so every path has exactly one
/// spelling and any column name, dots included, round-trips.
///
/// ```swift
/// FieldPath("meta.color").segments        // ["meta", "color"]
/// FieldPath(["a.b"]).description          // "a~1b"
/// ```
public struct FieldPath: Hashable, Sendable, CustomStringConvertible,
  ExpressibleByStringLiteral
{
  /// The column first, then nested member names. Never empty.
  public var segments: [String]

  /// A path from its segments.
  public init(_ segments: [String]) {
    precondition(!segments.isEmpty, "a FieldPath needs at least one segment")
    self.segments = segments
  }

  /// A path from its dotted text form.
  public init(_ text: String) {
    // Most paths are one plain column: no split, no unescaping.
    let utf8 = text.utf8
    if !utf8.contains(UInt8(ascii: ".")) && !utf8.contains(UInt8(ascii: "~")) {
      self.init([text])
      return
    }
    self.init(
      text.split(separator: ".", omittingEmptySubsequences: false).map {
        $0.utf8.contains(UInt8(ascii: "~"))
          ? $0.replacingOccurrences(of: "~1", with: ".").replacingOccurrences(of: "~0", with: "~")
          : String($0)
      })
  }

  /// A path from its dotted text form.
  public init(stringLiteral value: String) { self.init(value) }

  /// A path naming one top-level column, whatever characters it holds.
  public static func column(_ name: String) -> FieldPath { FieldPath([name]) }

  /// The top-level column.
  public var column: String { segments[0] }

  /// The dotted text form.
  public var description: String {
    segments.map {
      $0.utf8.contains(UInt8(ascii: "~")) || $0.utf8.contains(UInt8(ascii: "."))
        ? $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: ".", with: "~1")
        : $0
    }.joined(separator: ".")
  }

  /// This path with `name` appended.
  public func appending(_ name: String) -> FieldPath { FieldPath(segments + [name]) }

  /// Whether `self` equals `other` or lies inside it.
  public func hasPrefix(_ other: FieldPath) -> Bool {
    other.segments.count <= segments.count
      && zip(other.segments, segments).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
  }
}

extension String {
  fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
    guard firstRange(of: target) != nil else { return self }
    var result = ""
    var rest = self[...]
    while let range = rest.firstRange(of: target) {
      result += rest[..<range.lowerBound]
      result += replacement
      rest = rest[range.upperBound...]
    }
    return result + rest
  }
}
