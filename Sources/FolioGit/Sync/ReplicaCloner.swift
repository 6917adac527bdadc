import FolioCore
import FolioSystem
import Foundation
import Synchronization

/// Makes a replica from a remote: git's clone into a staging folder next
/// to the destination, the tree validated and its clocks checked while it
/// is checked out, then the folder renamed into place. A partial clone
/// fetches and checks out only the held tables' files.
enum ReplicaCloner {
  /// Clones with the layers in `wiring`; the public
  /// `clone(url:into:mergeDriver:)` (module `Folio`) passes them all.
  /// - Parameter tables: the tables a partial replica holds (see
  ///   ``Store/absentTables``); nil for all of them.
  static func clone(
    url: String, into directory: URL, mergeDriver: String = "folio", tables: [String]? = nil,
    wiring: StoreWiring
  )
    throws -> Store
  {
    let path = directory.standardizedFileURL.path
    if FileSystem.exists(path), !(try FileSystem.list(path) ?? []).isEmpty {
      if FileSystem.isRegularFile(path + "/" + Config.fileName),
        let repository = try? GitRepository.open(workTree: path), repository.remoteURL("origin") == url
      {
        return try Store(rootPath: FileSystem.realPath(path) ?? path, wiring: wiring)
      }
      throw FolioError(.io, "\(path) already exists and is not empty; pick another directory", path: path)
    }
    let (parent, name) = FileSystem.split(path)
    try FileSystem.makeDirectories(parent)
    let prefix = "." + name + ".folio-clone-"
    for leftover in try FileSystem.list(parent) ?? [] where leftover.hasPrefix(prefix) {
      if let pid = Int32(leftover.dropFirst(prefix.count)), GitIndexLock.processIsGone(pid) {
        try? FileManager.default.removeItem(atPath: parent + "/" + leftover)
      }
    }
    let staging = parent + "/" + prefix + String(getpid())
    do {
      try? FileManager.default.removeItem(atPath: staging)
      try cloneInto(
        staging, url: url, shownAs: path, mergeDriver: mergeDriver, tables: tables, wiring: wiring)
      // An empty folder of that name is replaced; a non-empty one (made
      // meanwhile) is an error.
      try FileSystem.syscall("rename", path: path) { rename(staging, path) }
    } catch {
      try? FileManager.default.removeItem(atPath: staging)
      throw error
    }
    try FileSystem.syncDirectory(parent)
    return try Store(rootPath: FileSystem.realPath(path) ?? path, wiring: wiring)
  }

  /// Clones into `path` (shown in messages as `shownAs`) and sets the
  /// store up there.
  private static func cloneInto(
    _ path: String, url: String, shownAs: String, mergeDriver: String, tables: [String]?, wiring: StoreWiring
  ) throws {
    // No folio.yaml yet: only the process's settings can name a key.
    let key = SyncConfig().sshKeyPath(root: path, settings: FolioSettings.current)
    let repository = try GitRepository.clone(url: url, into: path, sshKey: key, partial: tables != nil)
    var absent: [TableConfig] = []
    var target = try repository.headCommit()?.id
    if target == nil {
      // The remote's HEAD names a branch it does not have (a bare repository
      // made with another default branch): check out its main branch.
      let branches = try repository.references(prefix: "refs/remotes/origin/")
      if let tracking = branches.first(where: { $0.hasSuffix("/main") })
        ?? branches.first(where: { !$0.hasSuffix("/HEAD") }),
        let id = try repository.referenceID(tracking)
      {
        let name = "refs/heads/" + tracking.dropFirst("refs/remotes/origin/".count)
        try repository.setReference(name, to: id, message: "folio clone")
        try repository.setHead(name)
        // The upstream git clone would have set, so that a plain
        // `git pull` and `folio sync` know where the branch syncs.
        let short = String(name.dropFirst("refs/heads/".count))
        try repository.setConfig("branch.\(short).remote", "origin")
        try repository.setConfig("branch.\(short).merge", name)
        target = id
      }
    }
    if let target {
      // libgit2 was told not to check out: the tree is validated whole
      // first (no config yet: the remote's folio.yaml names the tables).
      let tree = try repository.commit(target).tree()
      if tables != nil, let entry = tree.entry(at: Config.fileName) {
        // A partial clone has no blob yet; folio.yaml names the tables.
        try repository.fetchMissing([entry.id], remote: "origin", sshKey: key)
      }
      let config = tree.entry(at: Config.fileName).flatMap { entry in
        try? Config(bytes: try repository.blob(entry.id), file: Config.fileName)
      }
      do {
        if let tables {
          absent = try PartialClone.absentTables(config ?? Config(), holding: tables)
          try PartialClone.fetchHeldBlobs(
            of: tree, since: nil, absentFolders: absent.map { $0.path + "/" }, remote: "origin",
            repository: repository, sshKey: key)
        }
        try TreePathValidator(repository: repository, config: config ?? Config()).validate(
          tree, of: target, against: nil)
        try checkOutWhileCheckingClocks(
          tree, of: target, repository: repository, path: path, absentFolders: absent.map { $0.path + "/" })
      } catch let error as FolioError {
        var refused = error
        refused.message += "; the clone in \(shownAs) was removed"
        throw refused
      }
    }
    guard FileSystem.isRegularFile(path + "/" + Config.fileName) else {
      throw FolioError(
        .storeNotFound,
        "\(url) has no \(Config.fileName) at its root; is it a Folio store? (the clone in \(shownAs) was removed)",
        path: shownAs)
    }
    let store = try StoreSetup.create(
      at: URL(fileURLWithPath: path), mergeDriver: mergeDriver, wiring: wiring)
    if let tables {
      try store.saveHeldTableNames(Set(tables.compactMap { store.config.table(named: $0)?.name }))
      if let target {
        try PartialClone.writeSparseCheckout(
          for: try repository.commit(target).tree(), absent: Set(absent.map(\.path)), repository: repository)
      }
    }
    // The clock starts past every op cloned: a sync then reads only the
    // logs HEAD does not hold (``OpHistory/latestStamp(excluding:)``).
    if let target,
      let latest = try OpHistory(tree: try repository.commit(target).tree(), repository: repository)
        .latestStamp()
    {
      try store.lock.withLock { try store.clock.observe(remoteStamp: latest) }
    }
  }

  /// Writes a fresh clone's files while the op logs' clocks are checked,
  /// once the tree's paths are known safe to write: the clone is still in
  /// its hidden staging folder, which a refusal removes whole, so nothing
  /// of it is seen before both are done. The check reads through a
  /// repository handle of its own, as libgit2 handles are not shared
  /// between threads.
  private static func checkOutWhileCheckingClocks(
    _ tree: GitTree, of target: GitOID, repository: GitRepository, path: String, absentFolders: [String]
  ) throws {
    let results = Mutex<[Int: any Error]>([:])
    let shared = CloneCheckoutJobs(tree: tree, repository: repository, absentFolders: absentFolders)
    DispatchQueue.concurrentPerform(iterations: 2) { job in
      do {
        if job == 0 {
          if shared.absentFolders.isEmpty {
            _ = try shared.repository.checkout(tree: shared.tree, force: true)
          } else {
            try PartialClone.checkOutHeldFiles(
              shared.tree, absentFolders: shared.absentFolders, repository: shared.repository)
          }
        } else {
          guard let own = try GitRepository.open(workTree: path) else {
            throw FolioError(.git, "the clone in \(path) has no repository to check", path: path)
          }
          // The remote's folio.yaml is its own word: the default clock bound.
          try ClockBound.checkClock(
            of: target, against: nil, repository: own, bound: SyncConfig.defaultMaxClockSkew)
        }
      } catch {
        results.withLock { $0[job] = error }
      }
    }
    // A refused clock is the answer that matters, whatever the checkout did.
    let errors = results.withLock { $0 }
    if let refusal = errors[1] { throw refusal }
    if let failure = errors[0] { throw failure }
  }
}

/// The clone's checkout job's handles. `@unchecked Sendable`: only the
/// checkout job uses them, and `concurrentPerform` returns after it ends.
private struct CloneCheckoutJobs: @unchecked Sendable {
  let tree: GitTree
  let repository: GitRepository
  let absentFolders: [String]
}
