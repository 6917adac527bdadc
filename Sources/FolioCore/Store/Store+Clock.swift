import FolioSystem
import Foundation

extension Store {
  /// Where the newest stamp seen from other replicas is kept, so local
  /// stamps always come after every op this replica has merged.
  var seenClockPath: String { privateDirectory + "/clock" }

  /// The newest stamp seen from other replicas, if any.
  func seenClock() throws -> HLC? {
    guard let bytes = try FileSystem.read(seenClockPath) else { return nil }
    return HLC(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// The latest wall time, in milliseconds, a stamp may carry now: real
  /// time plus `max-clock-skew`.
  var clockHorizon: Int64 {
    SystemClock.nowMilliseconds() + Int64(config.sync.maxClockSkew.components.seconds) * 1000
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
    resetClockCache()
  }
}
