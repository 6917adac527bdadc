extension Query {
  /// The part of an order index a filter lets a query skip to: bounds on
  /// `path` taken from the comparisons the filter's top-level `&&` joins
  /// (`==`, `<`, `<=`, `>`, `>=`, `in` against a literal). The range is a
  /// superset of what matches (the filter still runs on every document
  /// read), because these comparisons use the same order the index keeps
  /// (``ValueOrdering/compare(_:_:)``).
  static func filterBounds(_ filter: Predicate?, path: FieldPath) -> (lower: OrderPoint?, upper: OrderPoint?)
  {
    guard let filter else { return (nil, nil) }
    var lower: OrderPoint?
    var upper: OrderPoint?
    func raise(_ point: OrderPoint) {
      if lower.map({ point.isAfter($0) }) ?? true { lower = point }
    }
    func lowerTo(_ point: OrderPoint) {
      if upper.map({ $0.isAfter(point) }) ?? true { upper = point }
    }
    var terms = [filter]
    while let term = terms.popLast() {
      guard case .compare(let lhs, var comparator, let rhs) = term else {
        if case .and(let a, let b) = term { terms += [a, b] }
        continue
      }
      let literal: JSONValue
      switch (lhs, rhs) {
      case (.path(let p), .literal(let v)) where p == path:
        literal = v
      case (.literal(let v), .path(let p)) where p == path && comparator != .isIn && comparator != .contains:
        literal = v
        comparator = comparator.flipped
      default:
        continue
      }
      let value = OrderValue(literal)
      switch comparator {
      case .equal:
        raise(OrderPoint(value: value, key: .min))
        lowerTo(OrderPoint(value: value, key: .max))
      case .greater: raise(OrderPoint(value: value, key: .max))
      case .greaterOrEqual: raise(OrderPoint(value: value, key: .min))
      case .less: lowerTo(OrderPoint(value: value, key: .min))
      case .lessOrEqual: lowerTo(OrderPoint(value: value, key: .max))
      case .isIn:
        guard case .array(let elements) = literal, !elements.isEmpty else { continue }
        let values = elements.map(OrderValue.init)
        raise(OrderPoint(value: values.min { $0.compare($1) < 0 }!, key: .min))
        lowerTo(OrderPoint(value: values.max { $0.compare($1) < 0 }!, key: .max))
      case .notEqual, .contains:
        continue
      }
    }
    return (lower, upper)
  }
}

extension Predicate.Comparator {
  /// The comparator with its operands swapped: `3 < a` is `a > 3`.
  var flipped: Predicate.Comparator {
    switch self {
    case .less: .greater
    case .lessOrEqual: .greaterOrEqual
    case .greater: .less
    case .greaterOrEqual: .lessOrEqual
    default: self
    }
  }
}

extension OrderPoint {
  /// Whether this point lies after `other` in the index's order.
  func isAfter(_ other: OrderPoint) -> Bool {
    let c = value.compare(other.value)
    if c != 0 { return c > 0 }
    switch (key, other.key) {
    case (.max, .max), (.min, .min): return false
    case (.max, _), (_, .min): return true
    case (.min, _), (_, .max): return false
    case (.pk(let a), .pk(let b)): return ValueOrdering.comparePKs(a, b) > 0
    }
  }
}

/// How a query will run: which index it reads, over which range, and how
/// many documents that means (``Query/explain()``, `folio query --explain`).
public struct QueryExplanation: Sendable, CustomStringConvertible {
  /// The order key whose index is read; nil for a full scan or the pk order.
  public var index: String?
  /// Whether the filter narrowed the index range.
  public var narrowedByFilter: Bool
  /// Documents that will be read (the range's entries; for a scan, all).
  public var documentsToRead: Int
  /// Whether every document is read to order by a path with no index.
  public var fullScan: Bool

  /// One line, as `folio query --explain` prints it.
  public var description: String {
    if fullScan { return "full scan: no index on the order path; reads \(documentsToRead) documents" }
    let source = index.map { "index on \($0)" } ?? "pk order"
    let range = narrowedByFilter ? ", range narrowed by the filter" : ""
    return "\(source)\(range); reads \(documentsToRead) documents"
  }
}

extension Query {
  /// How this query will run, without reading any document.
  ///
  /// ```swift
  /// print(try flights.query().where("dep_delay > 300").explain())
  /// // index on dep_delay, range narrowed by the filter; reads 610 documents
  /// ```
  public func explain() throws -> QueryExplanation {
    let table = try collection.store.table(named: collection.name)
    let ordering = effectiveOrdering(table)
    var explanation = QueryExplanation(
      index: nil, narrowedByFilter: false, documentsToRead: 0, fullScan: false)
    if case .child(let path) = ordering {
      guard table.order.contains(where: { FieldPath($0) == path }) else {
        explanation.fullScan = true
        explanation.documentsToRead = try collection.allPKs().count
        return explanation
      }
      explanation.index = path.description
      let bounds = Query.filterBounds(filter, path: path)
      explanation.narrowedByFilter =
        usesFilterBounds && ((start == nil && bounds.lower != nil) || (end == nil && bounds.upper != nil))
    }
    var cursor = try rangeProbe.documents()
    explanation.documentsToRead = cursor.countWithoutReading()
    return explanation
  }
}
