import FolioCore
import FolioJSON

/// Counts values by the identity a filter's `==` gives them.
struct FacetTally {
  private enum Identity: Hashable {
    case bool(Bool)
    case number(ExactNumber)
    case string(ExactKey)
    case composite([UInt8])
  }

  /// One value's count, with its place in the value order worked out once,
  /// when the value is first seen, rather than at every comparison.
  private struct Entry {
    var value: JSONValue
    var count: Int
    let order: OrderValue
    let identity: Identity
  }

  private var entries: [Identity: Entry] = [:]
  private var nulls = 0
  private var total = 0

  mutating func add(_ value: JSONValue?) {
    total += 1
    guard let value, value != .null else {
      nulls += 1
      return
    }
    let identity: Identity
    switch value {
    case .bool(let flag): identity = .bool(flag)
    case .number(let text): identity = ExactNumber(text).map(Identity.number) ?? .composite(Array(text.utf8))
    case .string(let text): identity = .string(ExactKey(text))
    case .array, .object, .null: identity = .composite(value.compactBytes())
    }
    if entries[identity] != nil {
      entries[identity]!.count += 1
    } else {
      entries[identity] = Entry(value: value, count: 1, order: OrderValue(value), identity: identity)
    }
  }

  func counts(path: FieldPath, limit: Int, fromIndex: Bool) -> FacetCounts {
    // Only the top `limit` are sorted: a column of unique values (a key)
    // would otherwise sort the whole table.
    var top: [Entry] = []
    for entry in entries.values {
      if top.count == limit, let last = top.last, !Self.precedes(entry, last) { continue }
      let place = top.firstIndex { Self.precedes(entry, $0) } ?? top.count
      top.insert(entry, at: place)
      if top.count > limit { top.removeLast() }
    }
    return FacetCounts(
      path: path, values: top.map { FacetCounts.Value(value: $0.value, count: $0.count) },
      distinct: entries.count, nulls: nulls, total: total, fromIndex: fromIndex)
  }

  /// More common first; equally common in value order, then by JSON text
  /// (composites all rank alike, and only they can tie in value order).
  private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
    if a.count != b.count { return a.count > b.count }
    let order = a.order.compare(b.order)
    if order != 0 { return order < 0 }
    if case .composite(let x) = a.identity, case .composite(let y) = b.identity {
      return x.lexicographicallyPrecedes(y)
    }
    return false
  }
}
