import Glibc

/// Wall-clock time, in the units the HLC and generated pks use.
package enum SystemClock {
  /// Milliseconds since the Unix epoch.
  package static func nowMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
  }

  /// Seconds on a clock that never jumps, for timeouts.
  package static func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
  }
}
