import Glibc

/// What `folio-bench` needs to time live queries honestly, kept out of the
/// public API (`@_spi(Benchmark) import Folio`).
extension Store {
  /// The wall-clock time (`CLOCK_REALTIME`, nanoseconds since 1970) at
  /// which the last transaction this `Store` committed became visible: its
  /// op log line and every document file were in place, past its
  /// durability point, before live queries were told and before the commit
  /// call returned. 0 before the first commit. The clock is the system's,
  /// so a time taken in another process on this machine compares with it.
  @_spi(Benchmark) public var lastCommitWallNanos: Int { lastCommitInstant.withLock { $0 } }

  /// The system's wall clock, in nanoseconds since 1970, as
  /// ``lastCommitWallNanos`` reads it.
  @_spi(Benchmark) public static func wallNanos() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
  }
}
