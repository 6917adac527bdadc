import FolioCore
import FolioJSON

extension Query {
  /// The part of an order index a filter lets a query skip to: bounds on
  /// `path` taken from the comparisons the filter's top-level `&&` joins
  /// (`==`, `<`, `<=`, `>`, `>=`, `in` against a literal). The range is a
  /// superset of what matches (the filter still runs on every document
  /// read): `<`, `<=`, `>` and `>=` hold only between values of one kind
  /// (``Predicate``), compared in the order the index keeps
  /// (``ValueOrdering/compare(_:_:)``), so each also bounds the range to
  /// its literal's kind: `delay < 5` reads the numbers below 5, not the
  /// nulls and booleans that sort before them.
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
      case .greater, .greaterOrEqual, .less, .lessOrEqual:
        if let kind = OrderPoint.kindBounds(of: value) {
          raise(kind.lower)
          lowerTo(kind.upper)
        }
        switch comparator {
        case .greater: raise(OrderPoint(value: value, key: .max))
        case .greaterOrEqual: raise(OrderPoint(value: value, key: .min))
        case .less: lowerTo(OrderPoint(value: value, key: .min))
        default: lowerTo(OrderPoint(value: value, key: .max))
        }
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

extension Query {
  /// The ranges of the index on `path` that hold every document the filter
  /// can match: ``filterBounds(_:path:)``, split into one range per value
  /// when a top-level `&&` term is an `in` on `path` (so that `carrier in
  /// ["AA", "UA"]` reads those two values, not all between). Disjoint, in
  /// order.
  static func filterRanges(_ filter: Predicate, path: FieldPath) -> [(lower: OrderPoint?, upper: OrderPoint?)]
  {
    let hull = filterBounds(filter, path: path)
    var terms = [filter]
    while let term = terms.popLast() {
      if case .and(let a, let b) = term {
        terms += [a, b]
        continue
      }
      guard case .compare(.path(let p), .isIn, .literal(.array(let elements))) = term, p == path else {
        continue
      }
      var values = elements.map(OrderValue.init).sorted { $0.compare($1) < 0 }
      values = values.enumerated().filter { $0.offset == 0 || values[$0.offset - 1].compare($0.element) != 0 }
        .map(\.element)
      return values.compactMap { value in
        var lower = OrderPoint(value: value, key: .min)
        var upper = OrderPoint(value: value, key: .max)
        if let bound = hull.lower, bound.isAfter(lower) { lower = bound }
        if let bound = hull.upper, upper.isAfter(bound) { upper = bound }
        return lower.isAfter(upper) ? nil : (lower, upper)
      }
    }
    return [hull]
  }
}

extension Query {
  /// Whether every document in the range ``filterBounds(_:path:)`` gives
  /// matches `filter`: it is only `<`, `<=`, `>` and `>=` terms on `path`
  /// against numbers, strings or booleans, joined by `&&`. These compare by
  /// the index's own order (``ValueOrdering/compare(_:_:)``) within the
  /// literal's kind, and the range stays inside that kind, so the range is
  /// exact and a count needs no document. (`==` and `in` are not: they
  /// test equality, which tells apart values the order ties, such as two
  /// arrays; nor is a comparison with `null`, which holds for nothing.)
  static func isImpliedByRange(_ filter: Predicate, path: FieldPath) -> Bool {
    var terms = [filter]
    while let term = terms.popLast() {
      switch term {
      case .and(let a, let b): terms += [a, b]
      case .compare(.path(let p), let comparator, .literal(let value)),
        .compare(.literal(let value), let comparator, .path(let p)):
        guard p == path, [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(comparator) else {
          return false
        }
        switch value {
        case .number, .string, .bool: continue
        case .null, .array, .object: return false
        }
      default: return false
      }
    }
    return true
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
  /// The points just before and just after every value of `value`'s kind,
  /// for a kind that `<`, `<=`, `>` and `>=` can hold within (numbers,
  /// strings, booleans); nil for null and composites.
  static func kindBounds(of value: OrderValue) -> (lower: OrderPoint, upper: OrderPoint)? {
    switch value {
    case .bool:
      (OrderPoint(value: .bool(false), key: .min), OrderPoint(value: .bool(true), key: .max))
    case .number:
      (OrderPoint(value: .bool(true), key: .max), OrderPoint(value: .string(""), key: .min))
    case .string:
      (OrderPoint(value: .string(""), key: .min), OrderPoint(value: .composite, key: .min))
    case .null, .composite:
      nil
    }
  }

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

extension Query {
  /// Chooses where this query's documents come from, reading no document:
  /// the index of its ordering, or the range of another index that its
  /// filter bounds when that range is the smaller read, or every document.
  func accessPlan(store: Store, table: TableConfig) throws -> AccessPlan {
    let ordering = effectiveOrdering(table)
    let paths = table.indexedPaths.map { FieldPath($0) }
    var plan = AccessPlan(
      ordering: ordering,
      lower: start.map { (QueryPlan.point($0, isStart: true, ordering: ordering), $0.inclusive) },
      upper: end.map { (QueryPlan.point($0, isStart: false, ordering: ordering), $0.inclusive) })
    var orderPath: FieldPath?
    switch ordering {
    case .key, .value: plan.natural = .pk
    case .child(let path):
      orderPath = path
      plan.natural = paths.firstIndex(of: path).map { .index($0, path) } ?? .scan(path)
    }

    // Indexed paths other than the ordering's that the filter bounds.
    var candidates: [AccessPlan.Candidates] = []
    if usesFilterBounds, let filter {
      for (key, path) in paths.enumerated() where path != orderPath {
        let ranges = Query.filterRanges(filter, path: path)
        if ranges.count != 1 || ranges[0].lower != nil || ranges[0].upper != nil {
          candidates.append(AccessPlan.Candidates(key: key, path: path, ranges: ranges))
        }
      }
    }
    if case .scan = plan.natural, candidates.isEmpty { return plan }
    // Values matter (not only which documents exist) once an index on a
    // path is read.
    var contents = !candidates.isEmpty
    if case .index = plan.natural { contents = true }
    let snapshot = try OrderIndexCache.snapshot(store: store, table: table, contents: contents)
    plan.snapshot = snapshot
    plan.contentsChecked = contents

    let naturalEstimate = self.naturalEstimate(&plan, snapshot: snapshot)

    guard
      let best = candidates.map({ candidate in
        (candidate, candidate.ranges(in: snapshot).reduce(0) { $0 + $1.estimatedCount })
      }).min(by: { $0.1 < $1.1 })
    else { return plan }
    // Walking the ordering's index stops at the limit: if the filter keeps
    // documents as often as the best range suggests, that is about
    // limit × natural / best documents read.
    var naturalCost = naturalEstimate
    if case .scan = plan.natural {
    } else if let limit {
      let n: Int
      switch limit {
      case .first(let k), .last(let k): n = k
      }
      let expected = Double(n) * Double(naturalEstimate) / Double(Swift.max(1, best.1))
      naturalCost = Swift.min(naturalEstimate, Int(expected.rounded(.up)))
    }
    if best.1 < naturalCost {
      plan.candidates = best.0
      plan.narrowed = true
    }
    return plan
  }

  /// About how many documents the plan's natural access reads; a filter
  /// on the path of the index it walks narrows that index's range first,
  /// where the query sets no bound of its own on that side (recorded in
  /// `plan`).
  private func naturalEstimate(_ plan: inout AccessPlan, snapshot: IndexSnapshot) -> Int {
    switch plan.natural {
    case .pk:
      return
        MergedRange(runs: snapshot.runs(key: nil, constant: .null), lower: plan.lower, upper: plan.upper)
        .estimatedCount
    case .index(let key, let path):
      if usesFilterBounds, let filter {
        let bounds = Query.filterBounds(filter, path: path)
        if plan.lower == nil, let point = bounds.lower {
          plan.lower = (point, true)
          plan.narrowed = true
        }
        if plan.upper == nil, let point = bounds.upper {
          plan.upper = (point, true)
          plan.narrowed = true
        }
        plan.filterImplied = start == nil && end == nil && Query.isImpliedByRange(filter, path: path)
      }
      return
        MergedRange(runs: snapshot.runs(key: key, constant: .null), lower: plan.lower, upper: plan.upper)
        .estimatedCount
    case .scan:
      return snapshot.approximateCount
    }
  }

  /// How this query will run, without reading any document.
  ///
  /// ```swift
  /// print(try flights.query().where("dep_delay > 300").explain())
  /// // index on dep_delay, range narrowed by the filter; reads 610 documents
  /// ```
  /// - Throws: `UNKNOWN_TABLE`.
  public func explain() throws -> QueryExplanation {
    let store = collection.store
    let table = try store.table(named: collection.name)
    let plan = try accessPlan(store: store, table: table)
    var explanation = QueryExplanation(
      index: nil, narrowedByFilter: plan.narrowed, documentsToRead: 0, fullScan: false)
    if let candidates = plan.candidates, let snapshot = plan.snapshot {
      explanation.index = candidates.path.description
      explanation.secondary = !table.order.contains(candidates.path.description)
      explanation.sortedAfterwards = true
      for var range in candidates.ranges(in: snapshot) {
        while range.next() != nil { explanation.documentsToRead += 1 }
      }
      return explanation
    }
    switch plan.natural {
    case .scan:
      explanation.fullScan = true
      explanation.documentsToRead = try collection.allPKs().count
      return explanation
    case .index(_, let path):
      explanation.index = path.description
      explanation.secondary = !table.order.contains(path.description)
    case .pk:
      break
    }
    // Every entry of the range is read when a filter runs; else the limit
    // stops it.
    var cursor = try cursor(plan, store: store, table: table, limit: filter == nil ? limit : nil)
    explanation.documentsToRead = cursor.countWithoutReading()
    return explanation
  }
}
