import FolioCore
import FolioJSON

/// A query's ordering, range and filter, resolved once against its table:
/// the range ends as parsed ``OrderPoint``s, so that checking a document
/// against the query parses no bound again (live queries check every
/// changed document against every window; Observation/QueryObserver.swift).
struct QueryPlan: Sendable {
  /// The ordering in force (``Query/effectiveOrdering(_:)``).
  let ordering: Query.Ordering
  /// The start of the range and whether it is inclusive.
  let lower: (point: OrderPoint, inclusive: Bool)?
  /// The end of the range and whether it is inclusive.
  let upper: (point: OrderPoint, inclusive: Bool)?
  let filter: Predicate?

  init(_ query: Query, table: TableConfig) {
    let ordering = query.effectiveOrdering(table)
    self.ordering = ordering
    lower = query.start.map { (QueryPlan.point($0, isStart: true, ordering: ordering), $0.inclusive) }
    upper = query.end.map { (QueryPlan.point($0, isStart: false, ordering: ordering), $0.inclusive) }
    filter = query.filter
  }

  /// Where a bound lies: with `key`, at that pk; without, before (start,
  /// inclusive) or after every pk at its value.
  static func point(_ bound: Query.Bound, isStart: Bool, ordering: Query.Ordering) -> OrderPoint {
    if ordering == .key {
      // Checked when the bound was set: a string or a number.
      return OrderPoint(value: .null, key: .pk((try? Query.pkBound(bound.value, call: bound.call)) ?? ""))
    }
    let key: OrderPoint.KeyPoint = bound.key.map { .pk($0) } ?? (isStart == bound.inclusive ? .min : .max)
    return OrderPoint(value: OrderValue(bound.value), key: key)
  }

  /// The order value of a document under this ordering.
  func orderValue(of document: JSONObject) -> OrderValue {
    QueryPlan.orderValue(of: document, ordering: ordering)
  }

  /// The order value of a document under `ordering`.
  static func orderValue(of document: JSONObject, ordering: Query.Ordering) -> OrderValue {
    switch ordering {
    case .child(let path): OrderValue(document.childValue(at: path))
    case .key: OrderValue(nil)
    case .value: .composite
    }
  }

  /// Whether the position `(value, pk)` lies inside the range.
  func inRange(value: OrderValue, pk: String) -> Bool {
    if let lower {
      let c = lower.point.compare(value: value, pk: pk)
      if c < 0 || (c == 0 && !lower.inclusive) { return false }
    }
    if let upper {
      let c = upper.point.compare(value: value, pk: pk)
      if c > 0 || (c == 0 && !upper.inclusive) { return false }
    }
    return true
  }

  /// Whether the document `pk`, whose order value is `value`, passes the
  /// filter and lies inside the range (limits aside).
  func covers(pk: String, value: OrderValue, document: JSONObject) -> Bool {
    if let filter, !filter.matches(document) { return false }
    return inRange(value: value, pk: pk)
  }
}
