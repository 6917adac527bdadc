extension LiveQueryUpdate {
  /// The change from `old` to `new`, or nil when they are the same.
  ///
  /// Moves are the fewest that explain the new order: documents on a
  /// longest run that keeps its old relative order stay put, the others
  /// move.
  static func diff(old: [Document], new: [Document]) -> LiveQueryUpdate? {
    if old == new { return nil }
    var oldIndex: [String: Int] = [:]
    for (i, document) in old.enumerated() { oldIndex[document.pk] = i }
    var newIndex: [String: Int] = [:]
    for (i, document) in new.enumerated() { newIndex[document.pk] = i }

    let deletions = old.indices.filter { newIndex[old[$0].pk] == nil }
    let insertions = new.indices.filter { oldIndex[new[$0].pk] == nil }
    let common = new.indices.filter { oldIndex[new[$0].pk] != nil }
    let stay = Set(longestIncreasingRun(common.map { oldIndex[new[$0].pk]! }).map { common[$0] })
    let moved = common.filter { !stay.contains($0) }
    let updates = common.filter { old[oldIndex[new[$0].pk]!].value != new[$0].value }

    func prev(_ list: [Document], _ i: Int) -> String? { i > 0 ? list[i - 1].pk : nil }
    var children: [ChildEvent] = []
    for i in deletions {
      children.append(ChildEvent(kind: .removed, key: old[i].pk, prevKey: prev(old, i), document: old[i]))
    }
    for i in insertions {
      children.append(ChildEvent(kind: .added, key: new[i].pk, prevKey: prev(new, i), document: new[i]))
    }
    for i in moved {
      children.append(ChildEvent(kind: .moved, key: new[i].pk, prevKey: prev(new, i), document: new[i]))
    }
    for i in updates {
      children.append(ChildEvent(kind: .changed, key: new[i].pk, prevKey: prev(new, i), document: new[i]))
    }
    return LiveQueryUpdate(
      oldDocuments: old, insertions: insertions, deletions: deletions, updates: updates,
      moves: moved.map { LiveQueryMove(from: oldIndex[new[$0].pk]!, to: $0) }, childEvents: children)
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
