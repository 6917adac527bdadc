extension Query {
  /// Whether the document `pk` with `document` falls inside this query's
  /// filter and range (limits aside): what a query subscription covers.
  func covers(pk: String, document: JSONObject, table: TableConfig) -> Bool {
    if let filter, !filter.matches(document) { return false }
    let ordering = effectiveOrdering(table)
    let value: OrderValue =
      switch ordering {
      case .child(let path): OrderValue(document.value(at: path))
      case .key: OrderValue(nil)
      case .value: OrderValue(.object(document))
      }
    if let start {
      let c = boundPoint(start, isStart: true, ordering: ordering).compare(value: value, pk: pk)
      if c < 0 || (c == 0 && !start.inclusive) { return false }
    }
    if let end {
      let c = boundPoint(end, isStart: false, ordering: ordering).compare(value: value, pk: pk)
      if c > 0 || (c == 0 && !end.inclusive) { return false }
    }
    return true
  }

  private func boundPoint(_ bound: Bound, isStart: Bool, ordering: Ordering) -> OrderPoint {
    if ordering == .key {
      return OrderPoint(
        value: OrderValue(nil), key: .pk((try? Query.pkBound(bound.value, call: bound.call)) ?? ""))
    }
    let key: OrderPoint.KeyPoint = bound.key.map { .pk($0) } ?? (isStart == bound.inclusive ? .min : .max)
    return OrderPoint(value: OrderValue(bound.value), key: key)
  }
}
