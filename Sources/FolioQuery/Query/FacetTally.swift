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

  private var counts: [Identity: (value: JSONValue, count: Int)] = [:]
  private var nulls = 0
  private var total = 0

  mutating func add(_ value: JSONValue?) {
    total += 1
    let identity: Identity
    switch value {
    case nil, .null?:
      nulls += 1
      return
    case .bool(let flag)?: identity = .bool(flag)
    case .number(let text)?: identity = ExactNumber(text).map(Identity.number) ?? .composite(Array(text.utf8))
    case .string(let text)?: identity = .string(ExactKey(text))
    case .array?, .object?: identity = .composite(value!.compactBytes())
    }
    counts[identity, default: (value!, 0)].count += 1
  }

  func counts(path: FieldPath, limit: Int, fromIndex: Bool) -> FacetCounts {
    // Only the top `limit` are sorted: a column of unique values (a key)
    // would otherwise sort the whole table.
    var top: [(value: JSONValue, count: Int)] = []
    for entry in counts.values {
      if top.count == limit, let last = top.last, !Self.precedes(entry, last) { continue }
      let place = top.firstIndex { Self.precedes(entry, $0) } ?? top.count
      top.insert(entry, at: place)
      if top.count > limit { top.removeLast() }
    }
    return FacetCounts(
      path: path, values: top.map { FacetCounts.Value(value: $0.value, count: $0.count) },
      distinct: counts.count, nulls: nulls, total: total, fromIndex: fromIndex)
  }

  /// More common first; equally common in value order, then by JSON text
  /// (composites all rank alike).
  private static func precedes(_ a: (value: JSONValue, count: Int), _ b: (value: JSONValue, count: Int))
    -> Bool
  {
    if a.count != b.count { return a.count > b.count }
    let order = OrderValue(a.value).compare(OrderValue(b.value))
    if order != 0 { return order < 0 }
    return a.value.compactBytes().lexicographicallyPrecedes(b.value.compactBytes())
  }
}
