import FolioJSON

/// A value as queries order it: one of six ranks, and within a rank, what
/// decides the order. See ``ValueOrdering`` for the rules.
enum OrderValue: Sendable {
  /// A missing value or `null`.
  case null
  /// `false` or `true`.
  case bool(Bool)
  /// A number, compared exactly.
  case number(ExactNumber)
  /// A string, compared by UTF-16 code units.
  case string(String)
  /// An array or an object: all compare equal.
  case composite

  /// The order value of `value` (nil meaning missing).
  init(_ value: JSONValue?) {
    switch value {
    case nil, .null?: self = .null
    case .bool(let flag)?: self = .bool(flag)
    case .number(let text)?:
      // The parser only makes valid literals; a hand-made bad one sorts as 0.
      self = .number(ExactNumber(text) ?? ExactNumber("0")!)
    case .string(let text)?: self = .string(text)
    case .array?, .object?: self = .composite
    }
  }

  /// The rank: null 0, false 1, true 2, numbers 3, strings 4, composites 5.
  var rank: Int {
    switch self {
    case .null: 0
    case .bool(let flag): flag ? 2 : 1
    case .number: 3
    case .string: 4
    case .composite: 5
    }
  }

  /// Negative, zero or positive as `self` sorts before, with or after `other`.
  func compare(_ other: OrderValue) -> Int {
    switch (self, other) {
    case (.number(let a), .number(let b)): return a.compare(b)
    case (.string(let a), .string(let b)): return ValueOrdering.compareUTF16(a, b)
    default:
      let (a, b) = (rank, other.rank)
      return a == b ? 0 : (a < b ? -1 : 1)
    }
  }
}
