import FolioJSON

/// Which live queries a refresh must ask about a change, so that a commit
/// touches only the observers it can concern, not every one of its table.
///
/// Each observer leaves a ``Footprint``: the pks it holds (a change to one
/// of them may change what it shows) and the stretch of its ordering where
/// a document would join what it knows (for a limited window, from the
/// range's start to its read-ahead boundary). A change concerns an observer
/// when it names a held pk or its new position falls in that stretch; the
/// observer's own check then decides (``StoreObserver/prepare``), so the
/// index may only ever name too many, never too few. Used only under the
/// center's refresh lock.
final class ObserverIndex {
  /// What one observer can be concerned by.
  enum Footprint {
    /// Anything in its table (nothing is known yet, or it cannot say).
    case everything
    /// Changes to `pks`, and documents whose position under `ordering`
    /// falls between `lower` and `upper` (nil: no end), ends included.
    case known(pks: Set<ExactKey>, range: Stretch?)
  }

  /// A stretch of one ordering, ends included.
  struct Stretch {
    var ordering: Query.Ordering
    var lower: OrderPoint?
    var upper: OrderPoint?

    /// Whether two stretches (or their absence) are the same.
    static func same(_ a: Stretch?, _ b: Stretch?) -> Bool {
      func same(_ x: OrderPoint?, _ y: OrderPoint?) -> Bool {
        switch (x, y) {
        case (nil, nil): true
        case (let x?, let y?): StretchList.compare(x, y) == 0
        default: false
        }
      }
      switch (a, b) {
      case (nil, nil): return true
      case (let a?, let b?):
        return a.ordering == b.ordering && same(a.lower, b.lower) && same(a.upper, b.upper)
      default: return false
      }
    }
  }

  private struct Registered {
    var table: String
    var footprint: Footprint
  }

  private var registered: [Int: Registered] = [:]
  /// By table, then pk: the observers holding it.
  private var holders: [String: [ExactKey: Set<Int>]] = [:]
  /// By table: the observers concerned by everything.
  private var everything: [String: Set<Int>] = [:]
  /// By table, then ordering: the stretches, sorted when first asked.
  private var stretches: [String: [Query.Ordering: StretchList]] = [:]

  /// Records `id`'s footprint, replacing what it left before. Only what
  /// differs is touched: a window's stretch changes only when it runs its
  /// query again, so the stretch list is seldom re-sorted.
  func set(_ id: Int, table: String, footprint: Footprint) {
    guard let old = registered[id], old.table == table,
      case .known(let oldPKs, let oldRange) = old.footprint,
      case .known(let pks, let range) = footprint
    else {
      remove(id)
      add(id, table: table, footprint: footprint)
      return
    }
    registered[id] = Registered(table: table, footprint: footprint)
    for pk in oldPKs where !pks.contains(pk) {
      holders[table]?[pk]?.remove(id)
      if holders[table]?[pk]?.isEmpty == true { holders[table]?[pk] = nil }
    }
    for pk in pks where !oldPKs.contains(pk) { holders[table, default: [:]][pk, default: []].insert(id) }
    if !Stretch.same(oldRange, range) {
      if let oldRange { stretches[table]?[oldRange.ordering]?.remove(id) }
      if let range {
        stretches[table, default: [:]][range.ordering, default: StretchList()].insert(id, range)
      }
    }
  }

  private func add(_ id: Int, table: String, footprint: Footprint) {
    registered[id] = Registered(table: table, footprint: footprint)
    switch footprint {
    case .everything:
      everything[table, default: []].insert(id)
    case .known(let pks, let range):
      for pk in pks { holders[table, default: [:]][pk, default: []].insert(id) }
      if let range {
        stretches[table, default: [:]][range.ordering, default: StretchList()].insert(id, range)
      }
    }
  }

  /// Forgets `id`.
  func remove(_ id: Int) {
    guard let old = registered.removeValue(forKey: id) else { return }
    switch old.footprint {
    case .everything:
      everything[old.table]?.remove(id)
    case .known(let pks, let range):
      for pk in pks {
        holders[old.table]?[pk]?.remove(id)
        if holders[old.table]?[pk]?.isEmpty == true { holders[old.table]?[pk] = nil }
      }
      if let range { stretches[old.table]?[range.ordering]?.remove(id) }
    }
  }

  /// The observers of `table` that `changes` can concern, in id order.
  func candidates(table: String, changes: [DocumentCache.Change]) -> [Int] {
    var found = everything[table] ?? []
    let tableHolders = holders[table]
    for change in changes {
      if let ids = tableHolders?[change.key] { found.formUnion(ids) }
    }
    for ordering in stretches[table].map({ Array($0.keys) }) ?? [] {
      for change in changes where change.document != nil {
        // In place: the sort a lookup may make is kept.
        stretches[table]?[ordering]?.stab(value: change.orderValue(ordering), pk: change.pk, into: &found)
      }
    }
    return found.sorted()
  }
}

/// The stretches of one ordering, for finding those that hold a position.
/// Sorted by lower end, with the furthest upper end of each prefix, so a
/// lookup walks back from the last stretch that starts at or before the
/// position only while some stretch there could still reach it: with
/// windows that are short and seldom overlap, a handful of steps.
struct StretchList {
  private var items: [(id: Int, stretch: ObserverIndex.Stretch)] = []
  /// nil while unsorted.
  private var furthest: [OrderPoint?]?

  mutating func insert(_ id: Int, _ stretch: ObserverIndex.Stretch) {
    items.append((id, stretch))
    furthest = nil
  }

  mutating func remove(_ id: Int) {
    items.removeAll { $0.id == id }
    furthest = nil
  }

  /// Adds to `found` every stretch that holds the position `(value, pk)`.
  mutating func stab(value: OrderValue, pk: String, into found: inout Set<Int>) {
    if furthest == nil { sort() }
    guard let furthest else { return }
    // Stretches with lower end at or before the position.
    var low = 0
    var high = items.count
    while low < high {
      let mid = (low + high) / 2
      if items[mid].stretch.lower.map({ $0.compare(value: value, pk: pk) >= 0 }) ?? true {
        low = mid + 1
      } else {
        high = mid
      }
    }
    var i = low - 1
    while i >= 0 {
      // No stretch from here back reaches the position.
      if let reach = furthest[i], reach.compare(value: value, pk: pk) > 0 { break }
      if items[i].stretch.upper.map({ $0.compare(value: value, pk: pk) <= 0 }) ?? true {
        found.insert(items[i].id)
      }
      i -= 1
    }
  }

  private mutating func sort() {
    items.sort { a, b in
      switch (a.stretch.lower, b.stretch.lower) {
      case (nil, nil): return a.id < b.id
      case (nil, _): return true
      case (_, nil): return false
      case (let x?, let y?): return StretchList.compare(x, y) < 0
      }
    }
    var reach: [OrderPoint?] = []
    reach.reserveCapacity(items.count)
    var current: OrderPoint?? = .none  // .none: nothing yet; .some(nil): no end
    for item in items {
      switch (current, item.stretch.upper) {
      case (.none, let upper): current = .some(upper)
      case (.some(nil), _): break
      case (.some(_), nil): current = .some(nil)
      case (.some(let a?), let b?): if StretchList.compare(b, a) > 0 { current = .some(b) }
      }
      reach.append(current ?? nil)
    }
    furthest = reach
  }

  /// The order of two points: by value, then before every pk, at a pk, or
  /// after every pk.
  static func compare(_ a: OrderPoint, _ b: OrderPoint) -> Int {
    let c = a.value.compare(b.value)
    if c != 0 { return c }
    func rank(_ key: OrderPoint.KeyPoint) -> Int {
      switch key {
      case .min: 0
      case .pk: 1
      case .max: 2
      }
    }
    if case .pk(let x) = a.key, case .pk(let y) = b.key { return ValueOrdering.comparePKs(x, y) }
    let (p, q) = (rank(a.key), rank(b.key))
    return p == q ? 0 : (p < q ? -1 : 1)
  }
}
