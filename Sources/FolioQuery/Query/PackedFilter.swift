import FolioCore
import FolioJSON

/// A ``Predicate`` judged on a document's compact bytes, as the packed cache
/// holds them (``DocumentPack``), without parsing the document: the members
/// the predicate reads are found by ``CompactMembers``, `==`, `!=` and `in`
/// against a string, `true`, `false` or `null` compare bytes, and any other
/// comparison parses only the member it reads.
///
/// It gives the answer ``Predicate/matches(_:)`` gives on the parsed
/// document: a value with an escape in it is parsed before it is compared,
/// and compact bytes without escapes spell each string one way only.
struct PackedFilter {
  private indirect enum Node {
    /// `column == literal` (or `!=`, or `in` a list), where every literal
    /// has one spelling without escapes: its compact bytes.
    case spelled(column: Int, literals: [JSONValue], spellings: [[UInt8]], negated: Bool)
    case compare(Operand, Predicate.Comparator, Operand)
    /// `column comparator literal` for an integer literal: a member spelled
    /// as a plain integer is compared as one, without parsing; anything
    /// else takes `general`.
    case integer(column: Int, Predicate.Comparator, Int64, general: Node)
    case exists(Operand)
    case and(Node, Node)
    case or(Node, Node)
    case not(Node)
    case isTrue(Operand)
  }

  private enum Operand {
    /// The value at `path`, whose first segment is column `column`.
    case path(column: Int, path: FieldPath)
    case literal(JSONValue)
  }

  /// The top-level members the predicate reads, as UTF-8.
  let columns: [[UInt8]]
  private let root: Node

  /// Nil when a member the predicate reads has a name that might be
  /// spelled two ways in JSON (not printable ASCII, or holding `"` or `\`).
  init?(_ predicate: Predicate) {
    let names = predicate.columns.sorted()
    guard names.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C } })
    else { return nil }
    let index = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
    columns = names.map { Array($0.utf8) }
    func operand(_ operand: Predicate.Operand) -> Operand {
      switch operand {
      case .path(let path): .path(column: index[path.column]!, path: path)
      case .literal(let value): .literal(value)
      }
    }
    func node(_ predicate: Predicate) -> Node {
      switch predicate {
      case .compare(let a, let comparator, let b):
        if let spelled = Self.spelled(a, comparator, b, index) { return spelled }
        // `==` and `!=` are symmetric; `in` is not.
        if comparator == .equal || comparator == .notEqual,
          let spelled = Self.spelled(b, comparator, a, index)
        {
          return spelled
        }
        let general = Node.compare(operand(a), comparator, operand(b))
        if case .path(let path) = a, path.segments.count == 1, case .literal(.number(let text)) = b,
          comparator != .isIn, comparator != .contains,
          let literal = Self.plainInteger(text)
        {
          return .integer(column: index[path.column]!, comparator, literal, general: general)
        }
        return general
      case .exists(let path): return .exists(operand(.path(path)))
      case .and(let a, let b): return .and(node(a), node(b))
      case .or(let a, let b): return .or(node(a), node(b))
      case .not(let a): return .not(node(a))
      case .isTrue(let a): return .isTrue(operand(a))
      }
    }
    root = node(predicate)
  }

  /// The byte comparison for `path comparator literal`, when it applies.
  private static func spelled(
    _ path: Predicate.Operand, _ comparator: Predicate.Comparator, _ literal: Predicate.Operand,
    _ index: [String: Int]
  ) -> Node? {
    guard case .path(let path) = path, path.segments.count == 1, case .literal(let value) = literal else {
      return nil
    }
    let candidates: [JSONValue]
    switch comparator {
    case .equal, .notEqual: candidates = [value]
    case .isIn:
      // `in` holds only for an array of candidates (see Predicate.holds).
      guard case .array(let elements) = value else { return nil }
      candidates = elements
    default: return nil
    }
    var spellings: [[UInt8]] = []
    for candidate in candidates {
      switch candidate {
      case .string, .bool, .null: break
      default: return nil
      }
      let bytes = candidate.compactBytes()
      guard !bytes.contains(UInt8(ascii: "\\")) else { return nil }
      spellings.append(bytes)
    }
    return .spelled(
      column: index[path.column]!, literals: candidates, spellings: spellings,
      negated: comparator == .notEqual)
  }

  /// Whether the document in `bytes` matches; nil when the bytes are not
  /// compact JSON as Folio writes it (parse them and ask the predicate).
  /// - Parameter values: scratch space, reused between calls.
  func matches(_ bytes: UnsafeRawBufferPointer, values: inout [Range<Int>?]) -> Bool? {
    if values.count != columns.count { values = [Range<Int>?](repeating: nil, count: columns.count) }
    for i in values.indices { values[i] = nil }
    // Folio writes each member once, so the walk stops at the last member
    // the predicate reads.
    var left = columns.count
    let compact = values.withUnsafeMutableBufferPointer { found in
      CompactMembers.forEach(in: bytes) { key, value in
        for (i, column) in columns.enumerated() where column.count == key.count && key.elementsEqual(column) {
          if found[i] == nil { left -= 1 }
          found[i] = value
        }
        return left > 0
      }
    }
    guard compact else { return nil }
    var unreadable = false
    let result = evaluate(root, bytes, values, &unreadable)
    return unreadable ? nil : result
  }

  private func evaluate(
    _ node: Node, _ bytes: UnsafeRawBufferPointer, _ values: [Range<Int>?], _ unreadable: inout Bool
  ) -> Bool {
    switch node {
    case .spelled(let column, let literals, let spellings, let negated):
      guard let range = values[column] else { return literals.contains(.null) != negated }
      let value = UnsafeRawBufferPointer(rebasing: bytes[range])
      if value.contains(UInt8(ascii: "\\")) {
        // Another spelling of a string: compare what it says.
        guard let parsed = parse(value, &unreadable) else { return false }
        return literals.contains { ValueOrdering.equal(parsed, $0) } != negated
      }
      let equal = spellings.contains { $0.count == value.count && value.elementsEqual($0) }
      return equal != negated
    case .integer(let column, let comparator, let literal, let general):
      guard let range = values[column],
        let value = Self.plainInteger(UnsafeRawBufferPointer(rebasing: bytes[range]))
      else { return evaluate(general, bytes, values, &unreadable) }
      switch comparator {
      case .equal: return value == literal
      case .notEqual: return value != literal
      case .less: return value < literal
      case .lessOrEqual: return value <= literal
      case .greater: return value > literal
      case .greaterOrEqual: return value >= literal
      case .isIn, .contains: return evaluate(general, bytes, values, &unreadable)
      }
    case .compare(let a, let comparator, let b):
      return Predicate.holds(
        resolve(a, bytes, values, &unreadable), comparator, resolve(b, bytes, values, &unreadable))
    case .exists(let operand): return resolve(operand, bytes, values, &unreadable) != nil
    case .and(let a, let b):
      return evaluate(a, bytes, values, &unreadable) && evaluate(b, bytes, values, &unreadable)
    case .or(let a, let b):
      return evaluate(a, bytes, values, &unreadable) || evaluate(b, bytes, values, &unreadable)
    case .not(let a): return !evaluate(a, bytes, values, &unreadable)
    case .isTrue(let operand): return resolve(operand, bytes, values, &unreadable) == .bool(true)
    }
  }

  private func resolve(
    _ operand: Operand, _ bytes: UnsafeRawBufferPointer, _ values: [Range<Int>?], _ unreadable: inout Bool
  ) -> JSONValue? {
    switch operand {
    case .literal(let value): return value
    case .path(let column, let path):
      guard let range = values[column],
        let value = parse(UnsafeRawBufferPointer(rebasing: bytes[range]), &unreadable)
      else { return nil }
      if path.segments.count == 1 { return value }
      return JSONObject([(path.column, value)]).childValue(at: path)
    }
  }

  /// ``plainInteger(_:)-(UnsafeRawBufferPointer)`` of a literal's text.
  private static func plainInteger(_ text: String) -> Int64? {
    var text = text
    return text.withUTF8 { plainInteger(UnsafeRawBufferPointer($0)) }
  }

  /// The value of `bytes` if they spell an integer as compact JSON does,
  /// `-?(0|[1-9][0-9]*)`, with at most 18 digits, so that it fits an
  /// `Int64` and two such values compare as their numbers do; nil for
  /// anything else.
  private static func plainInteger(_ bytes: UnsafeRawBufferPointer) -> Int64? {
    var i = 0
    let negative = bytes.count > 0 && bytes[0] == UInt8(ascii: "-")
    if negative { i = 1 }
    let digits = bytes.count - i
    guard digits >= 1, digits <= 18, bytes[i] != UInt8(ascii: "0") || digits == 1 else { return nil }
    var value: Int64 = 0
    while i < bytes.count {
      let digit = bytes[i] &- UInt8(ascii: "0")
      guard digit < 10 else { return nil }
      value = value * 10 + Int64(digit)
      i += 1
    }
    return negative ? -value : value
  }

  private func parse(_ bytes: UnsafeRawBufferPointer, _ unreadable: inout Bool) -> JSONValue? {
    guard let value = try? JSONValue(parsing: bytes) else {
      unreadable = true
      return nil
    }
    return value
  }
}
