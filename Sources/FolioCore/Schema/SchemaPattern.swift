/// A `pattern` keyword's regular expression, compiled once when the schema
/// is read.
///
/// JSON Schema patterns are ECMA-262 regular expressions, not anchored (a
/// match anywhere in the string counts). Folio runs them with
/// ``LinearRegex``, in time linear in the string, so that no pattern and
/// no document can make a write, a merge, `status` or `fsck` hang: a
/// backtracking engine takes 41 s for `^(a+)+$` against 20 characters. A
/// pattern that only backtracking can run (backreferences, lookaround) is
/// refused when the schema loads.
final class SchemaPattern: Sendable {
  /// The pattern as the schema writes it.
  let source: String
  private let regex: LinearRegex

  /// Compiles `source`.
  /// - Throws: ``LinearRegex/SyntaxError``, for the caller to position.
  init(_ source: String) throws {
    self.source = source
    regex = try LinearRegex(source)
  }

  /// Whether the pattern matches anywhere in `text`.
  func matches(_ text: String) -> Bool {
    regex.matches(text)
  }
}
