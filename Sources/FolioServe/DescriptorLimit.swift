import Glibc

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which
/// bounds how many connections `folio serve` can hold.
enum DescriptorLimit {
  /// Descriptors the server needs beside its connections: the store's
  /// files, git, inotify, the listening socket, the refusals it drains.
  static let overhead = 384

  /// Raises the soft limit to the hard one (the default soft limit, 1,024
  /// on most systems, is a relic of `select`), and returns the soft limit
  /// in force afterwards.
  @discardableResult
  static func raise() -> Int {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { return 1024 }
    if limit.rlim_cur < limit.rlim_max {
      var raised = limit
      raised.rlim_cur = limit.rlim_max
      if setrlimit(resource, &raised) == 0 { limit = raised }
    }
    return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
  }

  /// Descriptors needed to hold `streams` event streams (a socket and an
  /// eventfd each) and `capacity` connections in all.
  static func needed(streams: Int, capacity: Int) -> Int {
    2 * streams + max(0, capacity - streams) + overhead
  }

  /// The streams `limit` descriptors can hold beside `capacity - streams`
  /// other connections.
  static func streamsHeld(by limit: Int, streams: Int, capacity: Int) -> Int {
    max(0, (limit - overhead - max(0, capacity - streams)) / 2)
  }
}
