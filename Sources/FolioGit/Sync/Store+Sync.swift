import FolioCore
import FolioSystem
import Foundation
import Synchronization

extension Store {
  /// Commits, fetches, merges (resolving table documents by replay) and
  /// pushes: the fetch and the push through the system git, with the
  /// user's git and ssh config, everything else through libgit2.
  ///
  /// The store lock is held only while the working tree changes, not during
  /// the network round trips, so other writers wait only briefly. A document
  /// someone edited since the commit is never overwritten: the sync stops
  /// with `WOULD_OVERWRITE` and changes nothing.
  ///
  /// The branch's upstream (`branch.<name>.remote` and `.merge` in git's
  /// config, as `git clone` and `git push -u` set them) decides what is
  /// fetched and where the push goes, as for `git pull` and `git push`.
  /// Without an upstream, or with a remote other than the upstream's, the
  /// branch of the same name on the remote is used.
  ///
  /// ```swift
  /// let summary = try store.sync()                 // the upstream, else origin
  /// let other = try store.sync(remote: "backup")   // another remote
  /// ```
  /// - Parameter remote: the remote; nil means the upstream's remote, else
  ///   `origin`.
  /// - Throws: `REMOTE` if the remote cannot be reached, `CREDENTIALS`,
  ///   `HOST_KEY` for an ssh host key that is unknown or changed,
  ///   `PUSH_REJECTED` if the remote kept moving through every round, or
  ///   refused the push three times in a row while it
  ///   stood still (a hook, a protected branch),
  ///   `CONFLICT` for files outside the tables that git could not merge.
  @discardableResult
  public func sync(remote requested: String? = nil, push: Bool = true) throws -> SyncSummary {
    try SyncEngine(store: self).sync(remote: requested, push: push)
  }

  /// ``sync(remote:push:)``, run on the store's executor.
  ///
  /// ```swift
  /// let summary = try await store.sync()
  /// ```
  @discardableResult
  public func sync(remote: String = "origin", push: Bool = true) async throws -> SyncSummary {
    try await perform { try self.sync(remote: remote, push: push) }
  }
}

extension Store {
  /// The ssh key fetches and pushes offer after the agent: the process's
  /// (``FolioSettings/sshKey``), else `ssh-key` under `sync:` in folio.yaml.
  var sshKeyPath: String? {
    config.sync.sshKeyPath(root: rootPath, settings: FolioSettings.current)
  }
}

/// Making a replica, and undoing a plain `git pull`.
extension Store {
  /// Clones with the layers in `wiring`; the public
  /// `clone(url:into:mergeDriver:)` (module `Folio`) passes them all.
  /// - Parameter tables: the tables a partial replica holds (see
  ///   ``absentTables``); nil for all of them.
  package static func clone(
    url: String, into directory: URL, mergeDriver: String = "folio", tables: [String]? = nil,
    wiring: StoreWiring
  ) throws -> Store {
    try ReplicaCloner.clone(
      url: url, into: directory, mergeDriver: mergeDriver, tables: tables, wiring: wiring)
  }

  /// Undoes the pull with the layers in `wiring`; the public
  /// `undoPullBringingBadConfig(at:)` (module `Folio`) passes them all.
  package static func undoPullBringingBadConfig(at directory: URL, wiring: StoreWiring) throws {
    try PullUndo.undoPullBringingBadConfig(at: directory, wiring: wiring)
  }
}
