import Foundation

extension Store {
  /// The post-merge hook's first step after a plain `git pull`: when the
  /// pull brought a `folio.yaml` that does not load (a table folder in
  /// `.git`, outside the store or inside another's; YAML that does not
  /// parse), every command, this hook's included, would fail on the store.
  /// So the old `folio.yaml` is put back and the branch moved back to
  /// `ORIG_HEAD` with Folio's checkout, as for a pull past the clock bound.
  ///
  /// Does nothing when the store's `folio.yaml` loads, or when there is no
  /// `ORIG_HEAD` whose `folio.yaml` loads to go back to.
  /// - Throws: `INVALID_CONFIG` at `folio.yaml:LINE:COL`, saying whether
  ///   the pull was undone.
  public static func undoPullBringingBadConfig(at directory: URL) throws {
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
      let line = try FileSystem.read(root + "/.git/ORIG_HEAD").map({ String(decoding: $0, as: UTF8.self) })?
        .split(separator: "\n").first,
      let orig = GitOID(hex: String(line)), orig != head.id,
      let entry = try repository.commit(orig).tree().entry(at: Config.fileName)
    else { throw failure }
    let trusted = try repository.blob(entry.id)
    guard (try? Config(bytes: trusted, file: Config.fileName)) != nil else { throw failure }
    // The old folio.yaml back first, so that the store opens on it.
    try FileSystem.writeAtomically(configPath, trusted, sync: true)
    let store = try Store(rootPath: root)
    let blocked = try store.lock.withLock {
      try store.checkout(orig, branch: try repository.headBranch(), repository: repository)
    }
    var error = failure
    error.message +=
      " (in the \(Config.fileName) that the pull of commit \(head.id.description.prefix(12)) brought, which would make every command fail on this store)"
    if blocked.isEmpty {
      error.message += "; the pull was undone (the branch is back at \(orig.description.prefix(12)))"
    } else {
      error.message +=
        "; the old \(Config.fileName) is back, but the pull could not be undone because "
        + "\(blocked.joined(separator: ", ")) changed since: run 'git reset --keep ORIG_HEAD' once they are committed"
    }
    throw error
  }
}
