/// Whether a process publishes a store's index state (see
/// ``IndexPublisher``), as `folio index-daemon --status` reports it.
///
/// ```swift
/// if case .daemon(let pid) = store.indexDaemonStatus() { print("daemon \(pid)") }
/// ```
public enum IndexDaemonStatus: Sendable, Hashable, CustomStringConvertible {
  /// No process publishes: fresh queries take a stat of every file.
  case none
  /// An index daemon (``IndexPublisher/Mode/daemon(idle:)``) runs with
  /// this pid.
  case daemon(pid: Int32)
  /// Another kind of publisher runs, such as `folio watch` or an app that
  /// called ``Store/publishIndexes()``; it is not stopped by
  /// ``Store/stopIndexDaemon(timeout:)``.
  case publisher(pid: Int32)

  /// The daemon's or publisher's pid; nil for ``none``.
  public var pid: Int32? {
    switch self {
    case .none: nil
    case .daemon(let pid), .publisher(let pid): pid
    }
  }

  /// `index daemon running (pid 42)`, `no index daemon`, or the publisher.
  public var description: String {
    switch self {
    case .none: "no index daemon"
    case .daemon(let pid): "index daemon running (pid \(pid))"
    case .publisher(let pid): "no index daemon; another process publishes the index state (pid \(pid))"
    }
  }
}
