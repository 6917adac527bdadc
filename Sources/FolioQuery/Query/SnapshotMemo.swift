import Synchronization

/// What is worked out once for one state of a table's index (its base, its
/// overlay) and shared by every ``IndexSnapshot`` of that state: the
/// overlay's sorted runs by key, and the packed cache checked against it.
/// A new state gets a new memo, so nothing here is ever invalidated.
///
/// Holds nothing that holds a snapshot (snapshots hold the memo).
final class SnapshotMemo: Sendable {
  /// A run is fixed by its key and, without one, by the constant value its
  /// items sort by (only `null` and the composite value are ever used).
  private struct RunKey: Hashable {
    var key: Int?
    var composite: Bool
  }

  private let runs = Mutex<[RunKey: ArrayRun]>([:])
  private let pack = Mutex<PackValidation?>(nil)

  /// The run for key `key` (nil: pk order) with `constant` as the value of
  /// every item when there is no key; `build` makes it the first time.
  func run(key: Int?, constant: OrderValue, build: () -> ArrayRun) -> ArrayRun {
    let runKey: RunKey
    switch constant {
    case .null: runKey = RunKey(key: key, composite: false)
    case .composite: runKey = RunKey(key: key, composite: true)
    default: return build()
    }
    if let run = runs.withLock({ $0[runKey] }) { return run }
    let run = build()
    runs.withLock { $0[runKey] = run }
    return run
  }

  /// The packed cache at `path` checked against this state of the index:
  /// the last one made, while the file at `path` is still the one it
  /// mapped (Folio only appends to a pack or replaces it, and either
  /// changes its stat data), else a new one from `check`.
  func packValidation(at path: String, check: () -> PackValidation) -> PackValidation {
    if let last = pack.withLock({ $0 }), let mapped = last.packIdentity, FileStat.of(path) == mapped {
      return last
    }
    let fresh = check()
    if fresh.packIdentity != nil && !fresh.wantsRewrite { pack.withLock { $0 = fresh } }
    return fresh
  }
}
