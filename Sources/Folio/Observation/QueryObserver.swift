import Synchronization

/// Follows a query's results.
///
/// A change re-runs the query only when it can alter the results: a changed
/// document that is in them, or one that now falls inside the range and
/// filter and, for a full limited window, sorts inside the window. The
/// re-run uses the order index, so a limited window reads only the
/// documents it returns. Anything else costs one document read.
final class QueryObserver: StoreObserver {
  let query: Query
  let table: String
  let core: LiveQueryCore<[Document], LiveQueryEvent>
  /// The results last computed, shared with no one else; written only under
  /// the center's refresh lock.
  private let current = Mutex<[Document]?>(nil)

  init(query: Query, core: LiveQueryCore<[Document], LiveQueryEvent>) {
    self.query = query
    self.table = query.collection.name
    self.core = core
  }

  func refresh(store: Store, changed: Set<String>?, cache: DocumentCache) throws {
    let previous = current.withLock { $0 }
    if let changed, let previous, try !affects(changed, previous: previous, store: store, cache: cache) {
      return
    }
    let documents = try query.get()
    current.withLock { $0 = documents }
    core.update(documents)
  }

  private func affects(_ changed: Set<String>, previous: [Document], store: Store, cache: DocumentCache) throws
    -> Bool
  {
    let members = Set(previous.map(\.pk))
    if !members.isDisjoint(with: changed) { return true }
    let tableConfig = try store.table(named: table)
    for pk in changed {
      guard let document = try cache.document(store: store, table: table, pk: pk),
        query.covers(pk: pk, document: document.value, table: tableConfig)
      else { continue }
      switch query.limit {
      case nil: return true
      case .first(let n):
        if previous.count < n { return true }
        if query.compare(document, previous[previous.count - 1], table: tableConfig) < 0 { return true }
      case .last(let n):
        if previous.count < n { return true }
        if query.compare(document, previous[0], table: tableConfig) > 0 { return true }
      }
    }
    return false
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
