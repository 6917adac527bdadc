import FolioCore
import FolioQuery
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// Starting an index daemon (``IndexPublisher/Mode/daemon(idle:)``) when a
/// query needs one: a fresh `folio query` or `folio export` on a large
/// table that finds no publisher, and so has to take a stat of every
/// document file, starts one in the background, so that the queries after
/// it skip that check.
///
/// It is sound for the same reason any publisher is: a query trusts the
/// index only on an answer given after its question, from the process that
/// holds `publisher.lock` and has watched the folder since its own full
/// check (see ``IndexPublisher`` for the rule and the file systems it
/// refuses to vouch for). A daemon adds no trust of its own; at worst a
/// query falls back to the full check.
extension IndexPublisher {
  /// `privateDirectory` → this process's own executable, for the stores
  /// whose queries start a daemon when they find no publisher.
  private static let onDemand = Mutex<[String: String]>([:])
  /// The stores this process already started a daemon for.
  private static let started = Mutex<Set<String>>([])

  /// A query that took the full check starts a daemon only for a table of
  /// at least this many documents, whose stat sweep costs tens of
  /// milliseconds or more (``FolioSettings/indexDaemonMinimumDocuments``;
  /// 0 starts one on every missed check).
  static var onDemandDocuments: Int { FolioSettings.current.indexDaemonMinimumDocuments }

  /// The mode the process's settings or the config ask for:
  /// ``FolioSettings/indexDaemon`` when set, else `index.daemon`.
  static func daemonMode(config: IndexConfig) -> IndexConfig.DaemonMode {
    FolioSettings.current.indexDaemon ?? config.daemon
  }

  static func enableOnDemand(store: Store, executable: String) {
    guard daemonMode(config: store.config.index) == .auto else { return }
    onDemand.withLock { $0[store.privateDirectory] = executable }
  }

  /// What a query calls after a full check that found no publisher:
  /// starts a daemon once per store and process, if enabled.
  static func publisherMissed(store: Store) {
    guard let executable = onDemand.withLock({ $0[store.privateDirectory] }),
      started.withLock({ $0.insert(store.privateDirectory).inserted })
    else { return }
    if let pid = DetachedProcess.spawn(
      executable: executable, arguments: ["-C", store.rootPath, "index-daemon", "--on-demand"],
      reaperName: "folio index daemon reaper")
    {
      IndexDebug.log("started an index daemon (pid \(pid))")
    } else {
      IndexDebug.log("could not start an index daemon: \(String(cString: strerror(errno)))")
    }
  }
}
