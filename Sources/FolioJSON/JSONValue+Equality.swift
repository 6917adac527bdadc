extension JSONValue: Equatable {
  /// Whether the two values have the same canonical JSON form.
  ///
  /// Objects are equal whatever the order of their members; numbers compare
  /// by literal text (`1` and `1.0` differ); strings compare by their exact
  /// Unicode scalars, not by Swift's canonical equivalence ("é" as U+00E9
  /// differs from "e\u{301}").
  ///
  /// ```swift
  /// let a: JSONValue = ["a": 1, "b": 2]
  /// let b: JSONValue = ["b": 2, "a": 1]
  /// a == b  // true
  /// ```
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.number(let a), .number(let b)): a.utf8Equals(b)
    case (.string(let a), .string(let b)): a.utf8Equals(b)
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a == b
    default: false
    }
  }
}

extension JSONValue: Hashable {
  /// Hashes the canonical JSON form, so that equal values hash equally.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null:
      hasher.combine(0 as UInt8)
    case .bool(let flag):
      hasher.combine(1 as UInt8)
      hasher.combine(flag)
    case .number(let text):
      hasher.combine(2 as UInt8)
      text.hashUTF8(into: &hasher)
    case .string(let text):
      hasher.combine(3 as UInt8)
      text.hashUTF8(into: &hasher)
    case .array(let elements):
      hasher.combine(4 as UInt8)
      hasher.combine(elements.count)
      for element in elements { element.hash(into: &hasher) }
    case .object(let object):
      hasher.combine(5 as UInt8)
      object.hash(into: &hasher)
    }
  }
}
