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

  /// Moves the local clock past `stamp` (an op from another replica). Call
  /// with the lock held.
  func observe(remoteStamp stamp: HLC) throws {
    if let current = try seenClock(), !(current < stamp) { return }
    try FileSystem.writeAtomically(seenClockPath, Array((stamp.description + "\n").utf8), sync: true)
    resetClockCache()
  }
}
