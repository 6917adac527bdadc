/// What changed in the list of open conflicts since the handler last heard,
/// delivered with the list by ``Store/observeConflicts(table:deliverOn:_:)``.
public struct ConflictListEvent: Sendable, Hashable {
  /// Whether this is the first event, with the list as it was when the
  /// observation started.
  public var isInitial: Bool
  /// Conflicts in the list now that were not in the last one: merges that
  /// overwrote a value.
  public var opened: [Conflict]
  /// Conflicts in the last list that are gone: settled by a resolution or
  /// a later write, here or on another replica.
  public var closed: [Conflict]

  /// Creates an event.
  public init(isInitial: Bool, opened: [Conflict], closed: [Conflict]) {
    self.isInitial = isInitial
    self.opened = opened
    self.closed = closed
  }

  /// The event from `old` to `new`; nil when they hold the same conflicts.
  static func change(from old: [Conflict], to new: [Conflict]) -> ConflictListEvent? {
    let before = Set(old)
    let after = Set(new)
    if before == after { return nil }
    return ConflictListEvent(
      isInitial: false, opened: new.filter { !before.contains($0) },
      closed: old.filter { !after.contains($0) })
  }
}
