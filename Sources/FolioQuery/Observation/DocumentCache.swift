import FolioCore
import FolioJSON

/// The documents read in one refresh, so observers of the same document
/// read its file once, and windows on the same ordering compute its order
/// value once. Used only under the center's refresh lock.
final class DocumentCache {
  /// One changed document, as every observer of its table sees it in this
  /// refresh.
  final class Change {
    let pk: String
    /// `pk` as a set or dictionary key.
    var key: ExactKey { ExactKey(pk) }
    let document: Document?
    /// Order values already computed, by ordering: a table has few.
    private var values: [(ordering: Query.Ordering, value: OrderValue)] = []

    init(pk: String, document: Document?) {
      self.pk = pk
      self.document = document
    }

    /// The document's order value under `ordering`, computed on first use.
    /// Only for a change with a document.
    func orderValue(_ ordering: Query.Ordering) -> OrderValue {
      for entry in values where entry.ordering == ordering { return entry.value }
      let value = QueryPlan.orderValue(of: document?.value ?? [:], ordering: ordering)
      values.append((ordering, value))
      return value
    }
  }

  // Pks by their bytes: twins are two documents (issue 13).
  private var documents: [String: [ExactKey: Change]] = [:]
  /// The changes primed, by table, in order: what windows walk.
  private var primed: [String: [Change]] = [:]
  /// What was read from disk: pks by table, nil for a whole table.
  private(set) var read: [String: Set<ExactKey>?] = [:]

  func prime(table: String, pk: String, document: Document?) {
    let change = Change(pk: pk, document: document)
    documents[table, default: [:]][ExactKey(pk)] = change
    primed[table, default: []].append(change)
    noteRead(table: table, pk: pk)
  }

  func document(store: Store, table: String, pk: String) throws -> Document? {
    try change(store: store, table: table, pk: pk).document
  }

  private func change(store: Store, table: String, pk: String) throws -> Change {
    if let cached = documents[table]?[ExactKey(pk)] { return cached }
    let change = Change(
      pk: pk, document: try PendingIDSpecificOperation(collection: store.collection(table), pk: pk).exec())
    documents[table, default: [:]][ExactKey(pk)] = change
    noteRead(table: table, pk: pk)
    return change
  }

  /// The changes to `pks` of `table`: the primed list itself when it is
  /// exactly those (the usual case: a refresh hands every observer of a
  /// table the same set, the pks it primed), checked once per table, so
  /// the 500th window costs no more lookups than the first; else each read
  /// or taken from the cache.
  func changes(store: Store, table: String, pks: Set<ExactKey>) throws -> [Change] {
    if let primed = primed[table], primed.count == pks.count {
      // The same set again shares its storage, and `==` sees that at once.
      if verified[table] == pks { return primed }
      if primed.allSatisfy({ pks.contains($0.key) }) {
        verified[table] = pks
        return primed
      }
    }
    return try pks.map { try change(store: store, table: table, pk: $0.string) }
  }

  /// The set each table's primed list was last found to match.
  private var verified: [String: Set<ExactKey>] = [:]

  /// A query ran over the table.
  func noteReadAll(table: String) { read[table] = .some(nil) }

  private func noteRead(table: String, pk: String) {
    if case .some(.none) = read[table] { return }
    read[table, default: Set<ExactKey>()]?.insert(ExactKey(pk))
  }
}
