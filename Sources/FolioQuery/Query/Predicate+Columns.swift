extension Predicate {
  /// The top-level columns the predicate reads: what a document must hold
  /// for ``matches(_:)`` to give the same answer as on the whole document.
  var columns: Set<String> { Set(paths.map(\.column)) }
}
