import Synchronization

/// Follows a query's results.
///
/// A change is folded into the last results without running the query
/// again whenever that is enough: without a limit the results hold every
/// match, and with one, documents outside the window sort beyond its far
/// end, so as long as the window stays full from what is known, nothing
/// else can enter. Only when a limited window loses members and has room is
/// the query run again, on the order index, reading just the documents it
/// returns.
final class QueryObserver: StoreObserver {
  let query: Query
  let table: String
  let core: LiveQueryCore<[Document], LiveQueryEvent>
  /// The results last computed; used only under the center's refresh lock.
  private let current = Mutex<[Document]?>(nil)

  init(query: Query, core: LiveQueryCore<[Document], LiveQueryEvent>) {
    self.query = query
    self.table = query.collection.name
    self.core = core
  }

  func refresh(store: Store, changed: Set<String>?, cache: DocumentCache) throws {
    let previous = current.withLock { $0 }
    var documents: [Document]
    if let changed, let previous,
      let folded = try fold(changed, into: previous, store: store, cache: cache)
    {
      documents = folded
    } else {
      documents = try query.get()
    }
    current.withLock { $0 = documents }
    core.update(documents)
  }

  /// The new results from the old ones and the changed documents, or nil
  /// when the query must run again.
  private func fold(_ changed: Set<String>, into previous: [Document], store: Store, cache: DocumentCache)
    throws
    -> [Document]?
  {
    let config = try store.table(named: table)
    var kept = previous.filter { !changed.contains($0.pk) }
    var candidates: [Document] = []
    for pk in changed {
      guard let document = try cache.document(store: store, table: table, pk: pk),
        query.covers(pk: pk, document: document.value, table: config)
      else { continue }
      candidates.append(document)
    }
    if kept.count == previous.count && candidates.isEmpty { return previous }
    let sorted = { (list: [Document]) in list.sorted { self.query.compare($0, $1, table: config) < 0 } }
    switch query.limit {
    case nil:
      return sorted(kept + candidates)
    case .first(let n):
      if previous.count < n { return Array(sorted(kept + candidates).prefix(n)) }
      let boundary = previous[previous.count - 1]
      kept += candidates.filter { query.compare($0, boundary, table: config) <= 0 }
      return kept.count >= n ? Array(sorted(kept).prefix(n)) : nil
    case .last(let n):
      if previous.count < n { return Array(sorted(kept + candidates).suffix(n)) }
      let boundary = previous[0]
      kept += candidates.filter { query.compare($0, boundary, table: config) >= 0 }
      return kept.count >= n ? Array(sorted(kept).suffix(n)) : nil
    }
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
