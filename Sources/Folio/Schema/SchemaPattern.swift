/// A `pattern` keyword's regular expression, compiled once when the schema
/// is read.
///
/// JSON Schema patterns are ECMA-262 regular expressions, not anchored (a
/// match anywhere in the string counts). Swift's `Regex` reads that syntax
/// (classes such as `\d` and `\w`, Unicode properties such as
/// `\p{Letter}`, which POSIX `regcomp` lacks) and matches by Unicode
/// scalars, as ECMA-262's `u` mode does.
final class SchemaPattern: Sendable {
  /// The pattern as the schema writes it.
  let source: String
  /// `nonisolated(unsafe)`: the value is written once, here, and only read
  /// after; matching does not change it (its compiled program is built
  /// once, under the standard library's own atomic guard).
  nonisolated(unsafe) private let regex: Regex<AnyRegexOutput>

  /// Compiles `source`.
  /// - Throws: the regex parser's error, for the caller to position.
  init(_ source: String) throws {
    self.source = source
    regex = try Regex(source).matchingSemantics(.unicodeScalar)
  }

  /// Whether the pattern matches anywhere in `text`.
  func matches(_ text: String) -> Bool {
    (try? regex.firstMatch(in: text)) != nil
  }
}
