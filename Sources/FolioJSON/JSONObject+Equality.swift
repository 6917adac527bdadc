extension JSONObject: Equatable {
  /// Whether the two objects have the same members, whatever their order:
  /// keys compared by exact Unicode scalars, values as ``JSONValue`` compares
  /// them.
  ///
  /// ```swift
  /// let a: JSONObject = ["a": 1, "b": 2]
  /// a == ["b": 2, "a": 1]  // true
  /// ```
  public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
    guard lhs.count == rhs.count else { return false }
    // Keys are unique within an object, so with equal counts, finding each
    // of lhs's members in rhs is enough.
    for (k, member) in lhs.members.enumerated() {
      let other: JSONValue
      // Members are often in the same order (two reads of one file):
      // try the same position before searching.
      if rhs.members[k].key.utf8Equals(member.key) {
        other = rhs.members[k].value
      } else if let position = rhs.position(of: member.key) {
        other = rhs.members[position].value
      } else {
        return false
      }
      if other != member.value { return false }
    }
    return true
  }
}

extension JSONObject: Hashable {
  /// Hashes the members regardless of their order, so that equal objects
  /// hash equally.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(count)
    // Each member hashes on its own and the results are summed, because a
    // sum does not depend on the order.
    var sum = 0
    for member in members {
      var memberHasher = Hasher()
      member.key.hashUTF8(into: &memberHasher)
      member.value.hash(into: &memberHasher)
      sum = sum &+ memberHasher.finalize()
    }
    hasher.combine(sum)
  }
}
