import FolioSystem
import Foundation

/// This replica's hybrid logical clock: the newest stamp in its op log
/// (cached in the store by the log's size), the newest stamp seen from
/// other replicas, and the bound past which no stamp is followed.
package struct ReplicaClock {
  /// The store whose clock this is.
  let store: Store

  /// The newest HLC in this replica's log. Cached while the log's size is
  /// unchanged; otherwise read from its tail.
  package func lastHLC() throws -> HLC? {
    let size = store.opLogSegments.clockKey()
    if let cached = store.clockState.withLock({ $0.logSize == size ? $0.last : nil }) { return cached }
    var last = try OpLog.lastOp(in: store.opLogPath)?.hlc
    // A segment just started is empty: the last op is in an older one.
    for older in store.opLogSegments.paths.dropFirst() where last == nil {
      last = try OpLog.lastOp(in: older)?.hlc
    }
    if let seen = withinHorizon(try seenClock()), last.map({ $0 < seen }) ?? true { last = seen }
    if let stamp = last, stamp.wall == 0 || withinHorizon(stamp) == nil {
      // A default write (stamped at time 0) is last, or a stamp past the
      // clock bound: the clock is the newest real stamp within the bound,
      // which takes a full read to find.
      let horizon = clockHorizon
      last = try OpLog.entries(in: store.opLogPath, displayName: store.relative(store.opLogPath)).map(
        \.op.hlc
      )
      .filter { $0.wall > 0 && $0.wall <= horizon }.max()
      if let seen = withinHorizon(try seenClock()), last.map({ $0 < seen }) ?? true { last = seen }
    }
    store.clockState.withLock { $0 = Store.ClockState(last: last, logSize: size) }
    return last
  }

  /// Where the newest stamp seen from other replicas is kept, so local
  /// stamps always come after every op this replica has merged.
  var seenClockPath: String { store.privateDirectory + "/clock" }

  /// The newest stamp seen from other replicas, if any.
  func seenClock() throws -> HLC? {
    guard let bytes = try FileSystem.read(seenClockPath) else { return nil }
    return HLC(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// The latest wall time, in milliseconds, a stamp may carry now: real
  /// time plus `max-clock-skew`.
  var clockHorizon: Int64 {
    SystemClock.nowMilliseconds() + Int64(store.config.sync.maxClockSkew.components.seconds) * 1000
  }

  /// `stamp`, or nil when it lies past ``clockHorizon``. The local clock
  /// never follows such a stamp: merges refuse them (`CLOCK_SKEW`), and one
  /// already on disk (a clock file or a log written before the bound
  /// existed) is ignored rather than carried forward.
  func withinHorizon(_ stamp: HLC?) -> HLC? {
    guard let stamp, stamp.wall <= clockHorizon else { return nil }
    return stamp
  }

  /// Moves the local clock past `stamp` (an op from another replica). Call
  /// with the lock held. A stamp past ``clockHorizon`` is not followed.
  package func observe(remoteStamp stamp: HLC) throws {
    guard withinHorizon(stamp) != nil else { return }
    if let current = try seenClock(), !(current < stamp) { return }
    try FileSystem.writeAtomically(seenClockPath, Array((stamp.description + "\n").utf8), sync: true)
    reset()
  }

  /// Forgets the cached clock, so the next stamp reads it afresh.
  package func reset() { store.clockState.withLock { $0 = Store.ClockState() } }
}
