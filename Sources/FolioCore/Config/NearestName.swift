/// The near miss of a name a person typed, for "did you mean …?": a table,
/// a field, an option. One measure for all of them.
package enum NearestName {
  /// The Levenshtein distance between `a` and `b` over Unicode scalars, or
  /// a number above `limit` as soon as it must exceed it. Names are
  /// compared on their first 256 scalars, so the cost stays bounded
  /// whatever a document or a command line holds.
  package static func distance(_ a: String, _ b: String, limit: Int = .max) -> Int {
    let a = Array(a.unicodeScalars.prefix(256))
    let b = Array(b.unicodeScalars.prefix(256))
    if a.isEmpty || b.isEmpty { return Swift.max(a.count, b.count) }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for (i, x) in a.enumerated() {
      current[0] = i + 1
      var rowMinimum = current[0]
      for (j, y) in b.enumerated() {
        current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
        rowMinimum = Swift.min(rowMinimum, current[j + 1])
      }
      if rowMinimum > limit { return limit + 1 }
      swap(&previous, &current)
    }
    return previous[b.count]
  }

  /// The candidate nearest to `name`, ignoring case, within `limit` edits
  /// (by default a third of the name's length, and at least 2: a slip of
  /// the keys, not another name); ties go to the first in sorted order.
  package static func nearest(to name: String, among candidates: some Sequence<String>, limit: Int? = nil)
    -> String?
  {
    let wanted = name.lowercased()
    let limit = limit ?? Swift.max(2, wanted.unicodeScalars.count / 3)
    var best: (name: String, distance: Int)?
    for candidate in Set(candidates).sorted() where candidate != name {
      let distance = Self.distance(wanted, candidate.lowercased(), limit: limit)
      if distance <= limit && distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    return best?.name
  }
}
