extension Range where Bound == Int {
  /// The first index in the range where `isAfter` holds, or the range's
  /// end, found by halving: `isAfter` must be false and then true along
  /// the range.
  package func partitionPoint(where isAfter: (Int) throws -> Bool) rethrows -> Int {
    var low = lowerBound
    var high = upperBound
    while low < high {
      let middle = (low + high) / 2
      if try isAfter(middle) { high = middle } else { low = middle + 1 }
    }
    return low
  }
}
