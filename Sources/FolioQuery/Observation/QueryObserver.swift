import FolioCore
import FolioJSON
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
///
/// A commit is checked against every window of its table, so that check
/// parses nothing: the range's bounds are parsed once, at start
/// (``QueryPlan``), each known match keeps its order value, and the changed
/// document's order value is computed once per ordering per refresh and
/// shared by every window (``DocumentCache/Change/orderValue(_:)``).
/// A window that neither holds the changed pk nor spans its new position
/// costs a set lookup and two or three comparisons.
final class QueryObserver: StoreObserver {
  let query: Query
  let table: String
  let core: LiveQueryCore<[Document], LiveQueryEvent>
  private let plan: QueryPlan

  /// A known match and its order value.
  private struct Entry {
    let document: Document
    let value: OrderValue
  }

  /// Every match up to `boundary`, sorted; `boundary` nil means every match
  /// in the table.
  private struct Known {
    var entries: [Entry]
    /// The pks of `entries`, by their bytes: twins are two documents.
    var pks: Set<ExactKey>
    var boundary: Entry?

    init(entries: [Entry], boundary: Entry?) {
      self.entries = entries
      self.pks = Set(entries.map(\.document.key))
      self.boundary = boundary
    }
  }

  /// Used only under the center's refresh lock.
  private let known = Mutex<Known?>(nil)

  init(query: Query, config: TableConfig, core: LiveQueryCore<[Document], LiveQueryEvent>) {
    self.query = query
    self.table = query.collection.name
    self.core = core
    self.plan = QueryPlan(query, table: config)
  }

  /// What a fold makes of a refresh.
  private enum Fold {
    /// Nothing this query shows changed.
    case unchanged
    /// The read-ahead is used up (or nothing is known yet): run the query.
    case rerun
    case folded(Known)
  }

  func prepare(store: Store, changed: Set<ExactKey>?, cache: DocumentCache) throws -> (() -> Void)? {
    var outcome = Fold.rerun
    if let changed {
      let changes = try cache.changes(store: store, table: table, pks: changed)
      // Folded in place: most windows miss, and copy nothing.
      outcome = known.withLock { known in known.map { fold(changes, changed, into: $0) } ?? .rerun }
    }
    let state: Known
    switch outcome {
    case .unchanged: return nil
    case .folded(let folded): state = folded
    case .rerun:
      cache.noteReadAll(table: table)
      state = try run()
    }
    let documents = window(state.entries)
    return {
      self.known.withLock { $0 = state }
      self.core.update(documents)
    }
  }

  private func entry(_ document: Document) -> Entry {
    Entry(document: document, value: plan.orderValue(of: document.value))
  }

  /// Runs the query with the read-ahead.
  private func run() throws -> Known {
    switch query.limit {
    case nil:
      return Known(entries: try query.get().map(entry), boundary: nil)
    case .first(let n):
      let ahead = 2 * n
      let entries = try query.replacingLimit(.first(ahead)).get().map(entry)
      return Known(entries: entries, boundary: entries.count == ahead ? entries.last : nil)
    case .last(let n):
      let ahead = 2 * n
      let entries = try query.replacingLimit(.last(ahead)).get().map(entry)
      return Known(entries: entries, boundary: entries.count == ahead ? entries.first : nil)
    }
  }

  private func window(_ entries: [Entry]) -> [Document] {
    switch query.limit {
    case nil: entries.map(\.document)
    case .first(let n): entries.prefix(n).map(\.document)
    case .last(let n): entries.suffix(n).map(\.document)
    }
  }

  private func compare(_ a: Entry, _ b: Entry) -> Int {
    let c = a.value.compare(b.value)
    return c != 0 ? c : ValueOrdering.comparePKs(a.document.pk, b.document.pk)
  }

  /// What is known after the changes.
  private func fold(_ changes: [DocumentCache.Change], _ changed: Set<ExactKey>, into previous: Known) -> Fold
  {
    var dropped = false
    var added: [Entry] = []
    for change in changes {
      if previous.pks.contains(change.key) { dropped = true }
      guard let document = change.document else { continue }
      // Past the boundary (or outside the range): never seen, and not
      // needed, so the cheap comparisons go before the filter.
      let candidate = Entry(document: document, value: change.orderValue(plan.ordering))
      if let boundary = previous.boundary {
        let c = compare(candidate, boundary)
        if case .last = query.limit { if c < 0 { continue } } else if c > 0 { continue }
      }
      guard plan.covers(pk: change.pk, value: candidate.value, document: document.value) else { continue }
      added.append(candidate)
    }
    // Nothing to sort, compare or deliver.
    if !dropped && added.isEmpty { return .unchanged }
    var kept = dropped ? previous.entries.filter { !changed.contains($0.document.key) } : previous.entries
    for entry in added {
      // Sorted insertion: the kept entries are sorted already.
      var low = 0
      var high = kept.count
      while low < high {
        let mid = (low + high) / 2
        if compare(kept[mid], entry) < 0 { low = mid + 1 } else { high = mid }
      }
      kept.insert(entry, at: low)
    }
    switch query.limit {
    case .first(let n), .last(let n):
      if previous.boundary != nil && kept.count < n { return .rerun }
    case nil: break
    }
    return .folded(Known(entries: kept, boundary: previous.boundary))
  }

  /// The pks known, and the stretch where a document would join them: the
  /// range, cut at the read-ahead boundary on the limited side.
  var footprint: ObserverIndex.Footprint {
    guard let known = known.withLock({ $0 }) else { return .everything }
    var range = ObserverIndex.Stretch(
      ordering: plan.ordering, lower: plan.lower?.point, upper: plan.upper?.point)
    if let boundary = known.boundary {
      let point = OrderPoint(value: boundary.value, key: .pk(boundary.document.pk))
      if case .last = query.limit { range.lower = point } else { range.upper = point }
    }
    return .known(pks: known.pks, range: range)
  }

  func stop() { core.stop() }
}
