import FolioCore
import FolioGit
import FolioSystem

/// What ``Watcher`` reports, one event per mutation recorded, per problem
/// found, and per commit or sync its timers make.
public enum WatchEvent: Sendable {
  /// The watches are in place and the changes made while nothing watched
  /// are recorded (`recorded` events came first for each of them).
  case ready(tables: [String])
  /// An edit was recorded in the op log as `op`. `file` is relative to the
  /// store root.
  case recorded(Op, file: String)
  /// A file could not be recorded (invalid JSON, a key column that names
  /// another pk), or a timer's commit or sync failed. Nothing was recorded
  /// for it and the file was left as it is; the watcher goes on.
  case problem(FolioError)
  /// The kernel dropped events (`IN_Q_OVERFLOW`); every table was scanned
  /// again, and what changed was recorded.
  case rescanned
  /// The commit timer committed.
  case committed(CommitSummary)
  /// The sync timer synced.
  case synced(SyncSummary)
}
