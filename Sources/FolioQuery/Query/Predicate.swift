import FolioCore
import FolioJSON

/// A filter for ``Query/where(_:)-(Predicate)``, usually parsed from text
/// with ``init(parsing:source:)``.
///
/// The language:
/// - comparisons `==`, `!=`, `<`, `<=`, `>`, `>=` between dotted paths
///   (`meta.color`) and JSON literals (`12`, `"x"`, `true`, `null`, `[1, 2]`);
/// - `a in [1, 2]`: `a` equals one of the elements;
/// - `tags contains "x"`: an array with an element equal to `"x"`, or a
///   string with `"x"` inside it;
/// - `exists(a.b)`: the path is present (even if its value is `null`);
/// - `&&`, `||`, `!` and parentheses; a bare path means `path == true`.
///
/// **Like with like.** `<`, `<=`, `>` and `>=` hold only between two
/// numbers, two strings or two booleans (`false < true`), compared as
/// ``ValueOrdering`` compares them; a missing value, `null`, an array, an
/// object or a pair of two kinds satisfies none of them, so `delay < 5`
/// holds for no document without a numeric delay, and `"NA" > 5` never
/// holds. `==` compares exactly (see ``ValueOrdering/equal(_:_:)``), where
/// a missing path equals `null`: `a == null` matches both, and
/// `exists(a)` tells them apart. `!=` is the negation of `==`, so
/// `a != 5` matches a document without `a`, as in MongoDB. The Firebase
/// order (``ValueOrdering``) stays the order of `orderBy`, ranges and
/// cursors. Path segments that are not identifiers go in backticks:
///
/// ```
/// `first name` == "Ada"
/// ```
///
/// ```swift
/// let p = try Predicate(parsing: #"AIRLINE == "AA" && DEPARTURE_DELAY > 60"#)
/// let late = try flights.query().where(p).get()
/// ```
public indirect enum Predicate: Sendable, Hashable {
  /// Two operands joined by a comparator.
  case compare(Operand, Comparator, Operand)
  /// The path is present in the document.
  case exists(FieldPath)
  /// Both hold.
  case and(Predicate, Predicate)
  /// Either holds.
  case or(Predicate, Predicate)
  /// The predicate does not hold.
  case not(Predicate)
  /// The operand is `true`.
  case isTrue(Operand)

  /// One side of a comparison.
  public enum Operand: Sendable, Hashable {
    /// The value at a path in the document (missing reads as `null`).
    case path(FieldPath)
    /// A JSON literal.
    case literal(JSONValue)
  }

  /// How a comparison joins its operands.
  public enum Comparator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case isIn = "in"
    case contains = "contains"
  }

  /// Whether `document` matches.
  public func matches(_ document: JSONObject) -> Bool {
    switch self {
    case .compare(let lhs, let comparator, let rhs):
      return Self.holds(lhs.resolve(in: document), comparator, rhs.resolve(in: document))
    case .exists(let path): return document.childValue(at: path) != nil
    case .and(let a, let b): return a.matches(document) && b.matches(document)
    case .or(let a, let b): return a.matches(document) || b.matches(document)
    case .not(let a): return !a.matches(document)
    case .isTrue(let operand): return operand.resolve(in: document) == .bool(true)
    }
  }

  /// Whether `a comparator b` holds for two resolved operands (nil: a
  /// missing path).
  static func holds(_ a: JSONValue?, _ comparator: Comparator, _ b: JSONValue?) -> Bool {
    switch comparator {
    case .equal: return ValueOrdering.equal(a, b)
    case .notEqual: return !ValueOrdering.equal(a, b)
    case .less: return orderOfLikes(a, b).map { $0 < 0 } ?? false
    case .lessOrEqual: return orderOfLikes(a, b).map { $0 <= 0 } ?? false
    case .greater: return orderOfLikes(a, b).map { $0 > 0 } ?? false
    case .greaterOrEqual: return orderOfLikes(a, b).map { $0 >= 0 } ?? false
    case .isIn:
      guard case .array(let elements)? = b else { return false }
      return elements.contains { ValueOrdering.equal(a, $0) }
    case .contains:
      switch (a, b) {
      case (.array(let elements)?, _): return elements.contains { ValueOrdering.equal($0, b) }
      case (.string(let text)?, .string(let part)?):
        return part.isEmpty || text.utf8.firstRange(of: part.utf8) != nil
      default: return false
      }
    }
  }
}

extension Predicate {
  /// How `a` and `b` compare when they are of one kind that has an order
  /// (two numbers, two strings or two booleans); nil for anything else, so
  /// that `<`, `<=`, `>` and `>=` hold for neither a missing value, `null`,
  /// an array, an object, nor a pair of two kinds. A filter is not a sort:
  /// `arr_delay < -60` must not hold for a flight with no `arr_delay`, as it
  /// holds in none of SQL, MongoDB or Python.
  static func orderOfLikes(_ a: JSONValue?, _ b: JSONValue?) -> Int? {
    switch (a, b) {
    case (.number?, .number?), (.string?, .string?), (.bool?, .bool?):
      return ValueOrdering.compare(a, b)
    default:
      return nil
    }
  }
}

extension Predicate.Operand {
  func resolve(in document: JSONObject) -> JSONValue? {
    switch self {
    case .path(let path): document.childValue(at: path)
    case .literal(let value): value
    }
  }
}
