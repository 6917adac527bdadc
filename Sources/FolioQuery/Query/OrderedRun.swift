/// A point in the order that a range bound names: a value, and where among
/// the documents with that value (before all, after all, or at a pk).
struct OrderPoint {
  enum KeyPoint {
    case min
    case max
    case pk(String)
  }

  var value: OrderValue
  var key: KeyPoint

  /// Where the position `(value, pk)` lies against this point.
  func compare(value other: OrderValue, pk: String) -> Int {
    let c = other.compare(value)
    if c != 0 { return c }
    switch key {
    case .min: return 1
    case .max: return -1
    case .pk(let bound): return ValueOrdering.comparePKs(pk, bound)
    }
  }
}

/// A run of documents sorted by (value, pk). A run may hold dead entries
/// (documents an overlay replaced); they keep their place, so binary search
/// still works, and iteration skips them.
protocol OrderedRun {
  var count: Int { get }
  func value(at i: Int) -> OrderValue
  func pk(at i: Int) -> String
  func isLive(at i: Int) -> Bool
}

extension OrderedRun {
  /// The first position at or after `point` (after it, if not `inclusive`).
  func lowerIndex(_ point: OrderPoint?, inclusive: Bool) -> Int {
    guard let point else { return 0 }
    return partition { i in
      let c = point.compare(value: value(at: i), pk: pk(at: i))
      return inclusive ? c >= 0 : c > 0
    }
  }

  /// One past the last position at or before `point` (before it, if not
  /// `inclusive`).
  func upperIndex(_ point: OrderPoint?, inclusive: Bool) -> Int {
    guard let point else { return count }
    return partition { i in
      let c = point.compare(value: value(at: i), pk: pk(at: i))
      return inclusive ? c > 0 : c >= 0
    }
  }

  /// The first index where `isAfter` holds (it holds for a suffix).
  private func partition(_ isAfter: (Int) -> Bool) -> Int {
    (0..<count).partitionPoint(where: isAfter)
  }
}

/// The base file's documents, in the order of one key or of pk.
struct BaseRun: OrderedRun {
  let base: IndexBase
  /// The order key, or nil for pk order.
  let key: Int?
  /// The value every document has in pk order.
  let constant: OrderValue
  let overridden: OverriddenDocuments

  var count: Int { base.count }
  private func doc(_ i: Int) -> Int { key.map { base.byKey($0, i) } ?? base.byPK(i) }
  func value(at i: Int) -> OrderValue { key.map { OrderValue(base.value(doc(i), key: $0)) } ?? constant }
  func pk(at i: Int) -> String { base.pk(doc(i)) }
  func isLive(at i: Int) -> Bool { !overridden[doc(i)] }
}

/// Documents sorted in memory.
struct ArrayRun: OrderedRun {
  var items: [(value: OrderValue, pk: String)]

  /// Sorts `items` by (value, pk).
  init(sorting items: [(value: OrderValue, pk: String)]) {
    self.items = items.sorted { a, b in
      let c = a.value.compare(b.value)
      return c != 0 ? c < 0 : ValueOrdering.comparePKs(a.pk, b.pk) < 0
    }
  }

  var count: Int { items.count }
  func value(at i: Int) -> OrderValue { items[i].value }
  func pk(at i: Int) -> String { items[i].pk }
  func isLive(at i: Int) -> Bool { true }
}

/// Walks a range of several runs as one sorted sequence, forwards or
/// backwards.
struct MergedRange {
  private let runs: [any OrderedRun]
  private var low: [Int]
  private var high: [Int]

  init(runs: [any OrderedRun], lower: (OrderPoint, Bool)?, upper: (OrderPoint, Bool)?) {
    self.runs = runs
    low = runs.map { $0.lowerIndex(lower?.0, inclusive: lower?.1 ?? true) }
    high = runs.map { $0.upperIndex(upper?.0, inclusive: upper?.1 ?? true) }
  }

  /// How many entries the range spans, dead ones included: an estimate of
  /// what walking it reads, at no cost.
  var estimatedCount: Int {
    zip(low, high).reduce(0) { $0 + Swift.max(0, $1.1 - $1.0) }
  }

  /// The next pk from the front.
  mutating func next() -> String? {
    var best: Int?
    for r in runs.indices {
      while low[r] < high[r] && !runs[r].isLive(at: low[r]) { low[r] += 1 }
      guard low[r] < high[r] else { continue }
      if let b = best {
        if Self.compare(runs[r], low[r], runs[b], low[b]) < 0 { best = r }
      } else {
        best = r
      }
    }
    guard let b = best else { return nil }
    defer { low[b] += 1 }
    return runs[b].pk(at: low[b])
  }

  /// The next pk from the back.
  mutating func previous() -> String? {
    var best: Int?
    for r in runs.indices {
      while low[r] < high[r] && !runs[r].isLive(at: high[r] - 1) { high[r] -= 1 }
      guard low[r] < high[r] else { continue }
      if let b = best {
        if Self.compare(runs[r], high[r] - 1, runs[b], high[b] - 1) > 0 { best = r }
      } else {
        best = r
      }
    }
    guard let b = best else { return nil }
    high[b] -= 1
    return runs[b].pk(at: high[b])
  }

  private static func compare(_ a: any OrderedRun, _ i: Int, _ b: any OrderedRun, _ j: Int) -> Int {
    let c = a.value(at: i).compare(b.value(at: j))
    return c != 0 ? c : ValueOrdering.comparePKs(a.pk(at: i), b.pk(at: j))
  }
}
