/// One node of a parsed YAML document, with the position where it starts.
///
/// This is deliberately small: Folio's config only needs scalars, sequences
/// and mappings, and it needs every node's position so that a bad value can
/// be reported as `folio.yaml:LINE:COL`. Aliases never reach this tree (the
/// parser rejects them), so the tree is exactly as large as the text.
struct YAMLNode: Sendable, Hashable {
  /// A key and its value, in a mapping.
  struct Pair: Sendable, Hashable {
    var key: YAMLNode
    var value: YAMLNode
  }

  /// What a scalar means, resolved the way YAML's core schema would, but only
  /// as far as the config needs: null, integer, or anything else as text.
  enum Resolved: Sendable, Hashable {
    /// `~`, `null`, an empty plain scalar, or `!!null`.
    case null
    /// A plain decimal integer such as `1`, or an `!!int` scalar.
    case integer(Int)
    /// Any other plain scalar (`abc`, `1.5`, `true`): usable as text.
    case plain
    /// A quoted, block or `!!str` scalar: always a string.
    case string
  }

  /// The node's content.
  enum Content: Sendable, Hashable {
    /// A scalar: its text and what that text means.
    case scalar(String, Resolved)
    /// A sequence, in order.
    case sequence([YAMLNode])
    /// A mapping, in file order. The parser has already rejected duplicate
    /// keys and keys that are not scalars.
    case mapping([Pair])
  }

  var content: Content
  /// The 1-based line where the node starts.
  var line: Int
  /// The 1-based column where the node starts, in Unicode scalars.
  var column: Int

  /// The scalar's text, if this is a scalar that is not null.
  ///
  /// Config keys and names are strings whatever they look like, so a plain
  /// `2024` names a table called "2024"; only null means "absent".
  var text: String? {
    guard case .scalar(let text, let resolved) = content, resolved != .null else { return nil }
    return text
  }

  /// The scalar's literal text, null or not: what a mapping key means.
  ///
  /// The parser only lets scalars be keys, so the empty fallback for a
  /// collection never shows up in practice.
  var keyText: String {
    guard case .scalar(let text, _) = content else { return "" }
    return text
  }

  /// Whether this is a null scalar, which the config reads as "absent".
  var isNull: Bool {
    if case .scalar(_, .null) = content { return true }
    return false
  }

  /// A short description of the node's type, for error messages.
  var typeDescription: String {
    switch content {
    case .scalar(_, .null): return "null"
    case .scalar(_, .integer): return "an integer"
    case .scalar(_, .plain): return "a plain scalar"
    case .scalar(_, .string): return "a string"
    case .sequence: return "a list"
    case .mapping: return "a mapping"
    }
  }
}
