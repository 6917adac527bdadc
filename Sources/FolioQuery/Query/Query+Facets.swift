import FolioCore
import FolioJSON

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
