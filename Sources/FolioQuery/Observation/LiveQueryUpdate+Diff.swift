import FolioCore
import FolioJSON

extension LiveQueryUpdate {
  /// The change from `old` to `new` under `ordering`, or nil when nothing
  /// a handler sees changed.
  ///
  /// - Documents are told apart by their pks' bytes: "\u{E9}" and
  ///   "e\u{301}" are two (issue 13).
  /// - A document changed when its value differs as Firebase compares
  ///   values (``ValueOrdering/equal(_:_:)``: numbers by value, so `3`
  ///   rewritten as `3.0` is no change and raises no event, though the file
  ///   changed).
  /// - The index sets are a batch update of a list view: moves are the
  ///   fewest that explain the new order (documents on a longest run that
  ///   keeps its old relative order stay put).
  /// - Child events follow Firebase's `EventGenerator.ts`: removed, added,
  ///   moved, changed, each kind in result order. `child_moved` is raised
  ///   for every changed document still in the results whose order value
  ///   changed, with its new prevKey, even when its place did not change;
  ///   `child_changed` follows for it. Documents that only shift because
  ///   others moved raise nothing.
  static func diff(old: [Document], new: [Document], ordering: Query.Ordering) -> LiveQueryUpdate? {
    if old == new { return nil }
    var oldIndex: [ExactKey: Int] = [:]
    for (i, document) in old.enumerated() { oldIndex[document.key] = i }
    var newIndex: [ExactKey: Int] = [:]
    for (i, document) in new.enumerated() { newIndex[document.key] = i }

    let deletions = old.indices.filter { newIndex[old[$0].key] == nil }
    let insertions = new.indices.filter { oldIndex[new[$0].key] == nil }
    let common = new.indices.filter { oldIndex[new[$0].key] != nil }
    let stay = Set(longestIncreasingRun(common.map { oldIndex[new[$0].key]! }).map { common[$0] })
    let moved = common.filter { !stay.contains($0) }
    let updates = common.filter {
      !ValueOrdering.equal(.object(old[oldIndex[new[$0].key]!].value), .object(new[$0].value))
    }
    if deletions.isEmpty && insertions.isEmpty && moved.isEmpty && updates.isEmpty { return nil }
    // EventGenerator.ts: a child_changed change whose indexed value changed
    // (`index.indexedValueChanged`) also raises child_moved.
    let childMoves = updates.filter {
      orderValueChanged(old[oldIndex[new[$0].key]!].value, new[$0].value, ordering: ordering)
    }

    func prev(_ list: [Document], _ i: Int) -> String? { i > 0 ? list[i - 1].pk : nil }
    var children: [ChildEvent] = []
    for i in deletions {
      children.append(ChildEvent(kind: .removed, key: old[i].pk, prevKey: prev(old, i), document: old[i]))
    }
    for i in insertions {
      children.append(ChildEvent(kind: .added, key: new[i].pk, prevKey: prev(new, i), document: new[i]))
    }
    for i in childMoves {
      children.append(ChildEvent(kind: .moved, key: new[i].pk, prevKey: prev(new, i), document: new[i]))
    }
    for i in updates {
      children.append(ChildEvent(kind: .changed, key: new[i].pk, prevKey: prev(new, i), document: new[i]))
    }
    return LiveQueryUpdate(
      oldDocuments: old, insertions: insertions, deletions: deletions, updates: updates,
      moves: moved.map { LiveQueryMove(from: oldIndex[new[$0].key]!, to: $0) }, childEvents: children)
  }

  /// Firebase's `indexedValueChanged`: the value at the order path differs
  /// (by value), the whole value differs when ordering by value, and never
  /// for key order.
  static func orderValueChanged(_ old: JSONObject, _ new: JSONObject, ordering: Query.Ordering) -> Bool {
    switch ordering {
    case .key: false
    case .value: !ValueOrdering.equal(.object(old), .object(new))
    case .child(let path): !ValueOrdering.equal(old.childValue(at: path), new.childValue(at: path))
    }
  }

  /// Positions in `values` of one longest strictly increasing subsequence
  /// (patience sorting, O(n log n)).
  static func longestIncreasingRun(_ values: [Int]) -> [Int] {
    var tails: [Int] = []  // positions of the smallest tail of each length
    var previous = [Int](repeating: -1, count: values.count)
    for (i, value) in values.enumerated() {
      var low = 0
      var high = tails.count
      while low < high {
        let mid = (low + high) / 2
        if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
      }
      if low > 0 { previous[i] = tails[low - 1] }
      if low == tails.count { tails.append(i) } else { tails[low] = i }
    }
    var run: [Int] = []
    var i = tails.last ?? -1
    while i >= 0 {
      run.append(i)
      i = previous[i]
    }
    return run.reversed()
  }
}
