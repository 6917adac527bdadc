extension Predicate {
  /// The top-level columns the predicate reads: what a document must hold
  /// for ``matches(_:)`` to give the same answer as on the whole document.
  var columns: Set<String> {
    var found = Set<String>()
    var terms = [self]
    func add(_ operand: Operand) {
      if case .path(let path) = operand { found.insert(path.column) }
    }
    while let term = terms.popLast() {
      switch term {
      case .compare(let a, _, let b):
        add(a)
        add(b)
      case .exists(let path): found.insert(path.column)
      case .and(let a, let b), .or(let a, let b): terms += [a, b]
      case .not(let a): terms.append(a)
      case .isTrue(let a): add(a)
      }
    }
    return found
  }
}
