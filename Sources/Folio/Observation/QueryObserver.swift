import Synchronization

/// Follows a query's results.
///
/// A change is folded into what is known without running the query again
/// whenever that is enough. A limited query is run with twice its limit
/// (the read-ahead), and the observer keeps every match up to the far end
/// of that run (the boundary): a match beyond it has never been seen, but
/// none can sort before it without being a changed document. So while at
/// least the limit's worth of known matches lies before the boundary, the
/// window is their first (or last) documents; only when deletions and
/// moves use up the read-ahead is the query run again, on the order index.
/// Without a limit, the results are every match, and never need a re-run.
final class QueryObserver: StoreObserver {
  let query: Query
  let table: String
  let core: LiveQueryCore<[Document], LiveQueryEvent>

  /// Every match up to `boundary`, sorted; `boundary` nil means every match
  /// in the table.
  private struct Known {
    var documents: [Document]
    var boundary: Document?
    /// Set by a fold that found nothing to change.
    var unchanged = false
  }

  /// Used only under the center's refresh lock.
  private let known = Mutex<Known?>(nil)

  init(query: Query, core: LiveQueryCore<[Document], LiveQueryEvent>) {
    self.query = query
    self.table = query.collection.name
    self.core = core
  }

  func prepare(store: Store, changed: Set<String>?, cache: DocumentCache) throws -> (() -> Void)? {
    let config = try store.table(named: table)
    var state: Known
    if let changed, let previous = known.withLock({ $0 }),
      let folded = try fold(changed, into: previous, config: config, store: store, cache: cache)
    {
      state = folded
    } else {
      cache.noteReadAll(table: table)
      state = try run()
    }
    if state.unchanged { return nil }
    let documents = window(state.documents)
    return {
      self.known.withLock { $0 = state }
      self.core.update(documents)
    }
  }

  /// Runs the query with the read-ahead.
  private func run() throws -> Known {
    switch query.limit {
    case nil:
      return Known(documents: try query.get(), boundary: nil)
    case .first(let n):
      let ahead = 2 * n
      let documents = try query.replacingLimit(.first(ahead)).get()
      return Known(documents: documents, boundary: documents.count == ahead ? documents.last : nil)
    case .last(let n):
      let ahead = 2 * n
      let documents = try query.replacingLimit(.last(ahead)).get()
      return Known(documents: documents, boundary: documents.count == ahead ? documents.first : nil)
    }
  }

  private func window(_ documents: [Document]) -> [Document] {
    switch query.limit {
    case nil: documents
    case .first(let n): Array(documents.prefix(n))
    case .last(let n): Array(documents.suffix(n))
    }
  }

  /// What is known after the changes, or nil when the query must run again.
  private func fold(
    _ changed: Set<String>, into previous: Known, config: TableConfig, store: Store, cache: DocumentCache
  ) throws -> Known? {
    // Most changes miss most queries: find that out without copying.
    let dropped =
      changed.count <= 4
      ? changed.contains { pk in previous.documents.contains { $0.pk == pk } }
      : previous.documents.contains { changed.contains($0.pk) }
    var kept = dropped ? previous.documents.filter { !changed.contains($0.pk) } : previous.documents
    var touched = dropped
    for pk in changed {
      guard let document = try cache.document(store: store, table: table, pk: pk),
        query.covers(pk: pk, document: document.value, table: config)
      else { continue }
      if let boundary = previous.boundary {
        let c = query.compare(document, boundary, table: config)
        if case .last = query.limit { if c < 0 { continue } } else if c > 0 { continue }
      }
      kept.append(document)
      touched = true
    }
    // Nothing to sort, compare or deliver.
    if !touched {
      var same = previous
      same.unchanged = true
      return same
    }
    kept.sort { query.compare($0, $1, table: config) < 0 }
    switch query.limit {
    case .first(let n), .last(let n):
      if previous.boundary != nil && kept.count < n { return nil }
    case nil: break
    }
    return Known(documents: kept, boundary: previous.boundary)
  }

  func stop() { core.stop() }
}

extension Query {
  /// The order of two documents under this query: by the ordering's value,
  /// then by pk.
  func compare(_ a: Document, _ b: Document, table: TableConfig) -> Int {
    func value(_ document: Document) -> OrderValue {
      switch effectiveOrdering(table) {
      case .child(let path): OrderValue(document.value.value(at: path))
      case .key: OrderValue(nil)
      case .value: OrderValue(.object(document.value))
      }
    }
    let c = value(a).compare(value(b))
    return c != 0 ? c : ValueOrdering.comparePKs(a.pk, b.pk)
  }
}
