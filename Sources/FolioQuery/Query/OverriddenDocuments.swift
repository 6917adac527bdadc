/// Which documents of an index base the overlay replaces or removes: a flag
/// per base document, allocated when the first one is set. An index whose
/// log is empty, the usual state a fresh process finds, then costs nothing
/// per base document to load.
struct OverriddenDocuments: Sendable {
  private var flags: [Bool] = []
  /// Base documents in all; the flags, once made, cover them all.
  private let count: Int

  /// None of `count` base documents overridden.
  init(count: Int) { self.count = count }

  /// Whether base document `doc` is overridden.
  subscript(doc: Int) -> Bool { flags.isEmpty ? false : flags[doc] }

  /// Whether any base document is overridden.
  var isEmpty: Bool { !flags.contains(true) }

  /// Marks base document `doc` as overridden.
  mutating func insert(_ doc: Int) {
    if flags.isEmpty { flags = [Bool](repeating: false, count: count) }
    flags[doc] = true
  }
}
