import Synchronization

/// How a ``Watcher``'s changed files were settled: by content hash alone, or
/// by parsing and diffing. Lets tests (and benchmarks) check that Folio's own
/// writes are recognised without being parsed.
final class WatchCounters: Sendable {
  /// The counts at one moment.
  struct Snapshot: Equatable, Sendable {
    /// Files dropped because their bytes hash equal to the known state.
    var matchedByHash = 0
    /// Files parsed and compared with the known state.
    var parsed = 0
    /// Files an uncommitted import wrote, taken as they are.
    var imported = 0
  }

  private let lock = Mutex(Snapshot())

  /// The counts so far.
  var snapshot: Snapshot { lock.withLock { $0 } }

  /// Counts a file dropped by its hash.
  func countHashMatch() { lock.withLock { $0.matchedByHash += 1 } }

  /// Counts a file an uncommitted import wrote.
  func countImported() { lock.withLock { $0.imported += 1 } }

  /// Counts a file parsed and compared.
  func countParse() { lock.withLock { $0.parsed += 1 } }
}
