import Glibc

/// Batches a listing's records into few writes to stdout: one `write` per
/// record costs a system call each, which for 20,000 documents took a
/// fresh `folio query` longer than reading them from the packed cache.
///
/// A record still reaches a reader (`folio query … | jq`) within
/// ``maximumDelay`` of being added, and everything is out once ``flush()``
/// returns; call it when the listing ends.
final class OutputBuffer {
  /// Written out once this many bytes are waiting.
  static let capacity = 1 << 16
  /// Written out once the oldest waiting record is this old (nanoseconds).
  static let maximumDelay: Int64 = 50_000_000

  private var bytes: [UInt8] = []
  private var oldest: Int64?

  init() { bytes.reserveCapacity(Self.capacity) }

  /// Adds `record`, writing out what waits if it is due.
  func append(_ record: [UInt8]) {
    bytes += record
    let now = Self.monotonicNanoseconds()
    if oldest == nil { oldest = now }
    if bytes.count >= Self.capacity || now - oldest! >= Self.maximumDelay { flush() }
  }

  /// Writes out everything waiting.
  func flush() {
    guard !bytes.isEmpty else { return }
    Output.printRaw(bytes)
    bytes.removeAll(keepingCapacity: true)
    oldest = nil
  }

  private static func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
  }
}
