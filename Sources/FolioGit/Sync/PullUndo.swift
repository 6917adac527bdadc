import FolioCore
import FolioSystem
import Foundation

/// Undoing a plain `git pull` (one made without Folio) that brought what
/// this replica must not take: ops stamped past the clock bound, or a
/// `folio.yaml` that does not parse. Folio's checkout moves the branch back
/// to `ORIG_HEAD`.
struct PullUndo {
  /// The store pulled into.
  let store: Store

  /// The post-merge half of the clock bound for plain `git pull`, which
  /// merges op logs without Folio (each replica's log changes on one side
  /// only, so git never calls the driver for it): when what came in holds
  /// ops stamped past the bound, moves the branch back to `ORIG_HEAD` with
  /// Folio's crash-safe checkout, and throws. Call with the lock held.
  /// - Parameters:
  ///   - orig: where the branch was before the pull (`ORIG_HEAD`).
  ///   - head: where the pull left it.
  /// - Throws: `CLOCK_SKEW`, saying whether the pull was undone.
  func undoPullPastClockBound(from orig: GitOID, to head: GitOID, repository: GitRepository) throws {
    guard try repository.isDescendant(head, of: orig) else { return }
    do {
      try ClockBound(store: store).checkClock(of: head, against: orig, repository: repository)
    } catch var error as FolioError where error.code == .clockSkew {
      error.message += try undoPull(to: orig, repository: repository)
      throw error
    }
  }

  /// Moves the branch back to `orig` (`ORIG_HEAD`) with Folio's checkout,
  /// undoing a plain `git pull`. Call with the lock held.
  /// - Returns: what happened, to end the refusal's message with.
  func undoPull(to orig: GitOID, repository: GitRepository) throws -> String {
    let blocked = try Checkout(store: store).checkout(
      orig, branch: try repository.headBranch(), repository: repository)
    if blocked.isEmpty {
      return "; the pull was undone (the branch is back at \(orig.description.prefix(12)))"
    }
    return "; the pull could not be undone because \(blocked.joined(separator: ", ")) changed since: "
      + "run 'git reset --keep ORIG_HEAD' once they are committed"
  }

  /// Undoes the pull with the layers in `wiring`; the public
  /// `undoPullBringingBadConfig(at:)` (module `Folio`) passes them all.
  static func undoPullBringingBadConfig(at directory: URL, wiring: StoreWiring) throws {
    let root = directory.standardizedFileURL.path
    let configPath = root + "/" + Config.fileName
    guard let current = try FileSystem.read(configPath) else { return }
    let failure: FolioError
    do {
      _ = try Config(bytes: current, file: Config.fileName)
      return
    } catch let error as FolioError {
      failure = error
    }
    guard let repository = try GitRepository.open(workTree: root),
      let head = try repository.headCommit(),
      let orig = try repository.origHead(other: head.id),
      let entry = try repository.commit(orig).tree().entry(at: Config.fileName)
    else { throw failure }
    let trusted = try repository.blob(entry.id)
    guard (try? Config(bytes: trusted, file: Config.fileName)) != nil else { throw failure }
    // The old folio.yaml back first, so that the store opens on it (the
    // checkout then finds it already as ORIG_HEAD has it).
    try FileSystem.writeAtomically(configPath, trusted, sync: true)
    let store = try Store(rootPath: root, wiring: wiring)
    var error = failure
    error.message +=
      " (in the \(Config.fileName) that the pull of commit \(head.id.description.prefix(12)) brought, which would make every command fail on this store)"
    error.message += try store.lock.withLock {
      try PullUndo(store: store).undoPull(to: orig, repository: repository)
    }
    throw error
  }
}
