import FolioCore
import FolioJSON

/// How often each value of one path occurs among a query's documents: the
/// most common values first, as a data browser shows them beside a column.
///
/// From ``Query/facets(of:limit:)``. Values are told apart as a filter
/// compares them: `1` and `1.0` are one value, strings by their bytes, and
/// arrays and objects by their compact JSON text. A document whose path is
/// missing or `null` counts in ``nulls``, not among ``values``.
public struct FacetCounts: Sendable, Equatable {
  /// One value and how many documents hold it.
  public struct Value: Sendable, Equatable {
    /// The value, as the first document counted holds it.
    public var value: JSONValue
    /// How many documents hold it.
    public var count: Int
  }

  /// The path counted.
  public var path: FieldPath
  /// The most common values, most common first; ties in value order
  /// (``ValueOrdering``).
  public var values: [Value]
  /// How many different values there are, `null` aside.
  public var distinct: Int
  /// How many documents have no value at the path, or `null`.
  public var nulls: Int
  /// How many documents were counted: those the query matches.
  public var total: Int
  /// Whether the counts came from the table's index alone, with no document
  /// read: the path is indexed (`order` or `indexes` in `folio.yaml`) and
  /// the query has no filter, range or limit.
  public var fromIndex: Bool
}

extension Query {
  /// Counts the values of `path` among the documents this query matches
  /// (its filter, range and limit applied; its order does not matter) and
  /// returns the `limit` most common.
  ///
  /// ```swift
  /// let carriers = try flights.query().where("dep_delay > 60").facets(of: "carrier")
  /// for facet in carriers.values { print(facet.value, facet.count) }
  /// ```
  ///
  /// A path listed under `order` or `indexes` is counted from the index,
  /// without reading a document, when the query has no filter, range or
  /// limit; otherwise each matching document is read once, from the packed
  /// cache where it is current. Files that do not parse are left out, as
  /// the query leaves them out.
  /// - Throws: `UNKNOWN_TABLE`, `TABLE_ABSENT`, and what reading the
  ///   documents throws.
  public func facets(of path: FieldPath, limit: Int = 10) throws -> FacetCounts {
    precondition(limit > 0, "a facet limit is at least 1")
    let store = collection.store
    let table = try store.table(named: collection.name)
    var tally = FacetTally()
    var fromIndex = false
    if filter == nil && start == nil && end == nil && self.limit == nil,
      table.indexedPaths.contains(where: { FieldPath($0) == path })
    {
      let snapshot = try OrderIndexCache.snapshot(store: store, table: table, contents: true)
      if let key = snapshot.keys.firstIndex(of: path) {
        snapshot.forEachValue(key: key) { tally.add($0) }
        fromIndex = true
      }
    }
    if !fromIndex {
      var cursor = try documents()
      while let document = try cursor.next() { tally.add(document.value.childValue(at: path)) }
    }
    return tally.counts(path: path, limit: limit, fromIndex: fromIndex)
  }
}

extension IndexSnapshot {
  /// Calls `body` with each live, readable document's value of key `key`
  /// (nil where missing), in no particular order, reading no document.
  func forEachValue(key: Int, _ body: (JSONValue?) -> Void) {
    if let base {
      for doc in 0..<base.count where !overridden[doc] {
        if !unreadable.isEmpty && unreadable[base.pk(doc)] != nil { continue }
        body(base.value(doc, key: key))
      }
    }
    for item in overlay where unreadable.isEmpty || unreadable[item.pk] == nil {
      body(item.entry.values[key])
    }
  }
}

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
