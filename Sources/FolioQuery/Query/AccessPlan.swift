import FolioCore

/// Where a query's documents come from, as ``Query/accessPlan(store:table:)``
/// chose it before reading any document.
struct AccessPlan {
  /// How the ordering alone would be served.
  enum Natural {
    /// The pk order of the index (ordering by key or by value).
    case pk
    /// The index of the indexed path ordered by: its key number and path.
    case index(Int, FieldPath)
    /// No index: every document is read and sorted by this path.
    case scan(FieldPath)
  }

  /// Ranges of an index that hold every document a filter can match.
  struct Candidates {
    /// The index's key number and path.
    var key: Int
    var path: FieldPath
    /// Disjoint, in order; the bounds are inclusive.
    var ranges: [(lower: OrderPoint?, upper: OrderPoint?)]

    /// The ranges over `snapshot`'s index.
    func ranges(in snapshot: IndexSnapshot) -> [MergedRange] {
      let runs = snapshot.runs(key: key, constant: .null)
      return ranges.map {
        MergedRange(runs: runs, lower: $0.lower.map { ($0, true) }, upper: $0.upper.map { ($0, true) })
      }
    }
  }

  let ordering: Query.Ordering
  var natural: Natural = .pk
  /// The range of the ordering, with the filter's bounds on the order path
  /// when they narrow it.
  var lower: (OrderPoint, Bool)?
  var upper: (OrderPoint, Bool)?
  /// Whether the filter narrowed what is read.
  var narrowed = false
  /// Whether the range alone decides the filter (``Query/isImpliedByRange(_:path:)``),
  /// so that no document need be read to apply it.
  var filterImplied = false
  /// When set, the documents come from this index's range (inclusive
  /// bounds taken from the filter) and are sorted afterwards.
  var candidates: Candidates?
  /// The checked index, unless the plan is a scan with no index to use.
  var snapshot: IndexSnapshot?
  /// Whether that check covered document contents, not only which
  /// documents exist (see ``TableIndex/fullCheck(contents:)``).
  var contentsChecked = false

  init(
    ordering: Query.Ordering, lower: (OrderPoint, Bool)?, upper: (OrderPoint, Bool)?
  ) {
    self.ordering = ordering
    self.lower = lower
    self.upper = upper
  }
}
