import FolioCore

extension Query {
  /// The path `orderBy(child:)` names, checked as Firebase checks a child
  /// path (`validatePathString` in firebase-js-sdk's `core/util/validation.ts`).
  ///
  /// Segments are separated by `.` (Folio's spelling) or `/` (Firebase's),
  /// so `meta/score` and `meta.score` are one path; `~1` and `~0` still
  /// stand for a `.` and a `~` inside a segment (``FieldPath``), and a
  /// segment between two backticks is taken whole. Refused,
  /// with a message that names the mistake: an empty path or segment,
  /// `$key`, `$value` and `$priority` (which name orderings, not children),
  /// and segments holding `[`, `]`, `#`, `$` or a control character, which
  /// Firebase forbids in keys. Before this a misspelt path silently ordered
  /// by a missing column (issue 13).
  /// - Throws: `INVALID_QUERY`.
  package static func childPath(_ text: String) throws -> FieldPath {
    switch text {
    case "":
      throw mistake("orderBy(child: \"\"): the path is empty; name a column, such as \"meta.score\"")
    case "$key":
      throw mistake("orderBy(child: \"$key\"): to order by pk, use orderByKey() (--order-by-key)")
    case "$value":
      throw mistake(
        "orderBy(child: \"$value\"): to order by the document, use orderByValue() (--order-by-value)")
    case "$priority":
      throw mistake("orderBy(child: \"$priority\"): Folio has no priorities; order by a column")
    default: break
    }
    var segments: [String] = []
    if text.utf8.contains(UInt8(ascii: "`")) {
      // A segment in backticks is taken whole (`` `dep time` ``, `` `a.b` ``),
      // as in a filter; such a path joins its segments with dots.
      segments = try FieldPath(parsing: text, source: "orderBy(child:)").segments
    }
    for piece in segments.isEmpty ? text.split(separator: "/", omittingEmptySubsequences: false) : [] {
      guard !piece.isEmpty else {
        throw mistake("orderBy(child: \"\(text)\"): the path has an empty segment")
      }
      segments += FieldPath(String(piece)).segments
    }
    for segment in segments {
      if segment.isEmpty {
        throw mistake("orderBy(child: \"\(text)\"): the path has an empty segment")
      }
      if let bad = segment.unicodeScalars.first(where: {
        "[]#$".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F
      }) {
        let shown = bad.value < 0x20 || bad.value == 0x7F ? "a control character" : "'\(bad)'"
        throw mistake(
          "orderBy(child: \"\(text)\"): segment \"\(segment)\" holds \(shown); a child path may not hold [, ], #, $ or control characters"
        )
      }
    }
    return FieldPath(segments)
  }
}
