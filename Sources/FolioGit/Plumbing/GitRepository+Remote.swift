internal import Clibgit2
import FolioSystem
import Glibc

extension GitRepository {
  /// The URL of remote `name`.
  /// - Throws: `REMOTE` unless `name` is a configured remote: git would
  ///   take an unknown name for a path or URL and say something less
  ///   helpful.
  private func configuredRemoteURL(_ name: String) throws -> String? {
    var remote: OpaquePointer?
    let rc = git_remote_lookup(&remote, handle, name)
    if rc == GIT_ENOTFOUND.rawValue || rc == GIT_EINVALIDSPEC.rawValue {
      throw FolioError(
        .remote, "no remote named '\(name)'; add one with 'git remote add \(name) URL'",
        function: "git_remote_lookup")
    }
    try LibGit2.check(rc, "git_remote_lookup")
    defer { git_remote_free(remote) }
    return git_remote_url(remote).map { String(cString: $0) }
  }

  /// The URL of remote `name`, for messages; nil when there is none.
  func remoteURL(_ name: String) -> String? {
    try? configuredRemoteURL(name)
  }

  /// Fetches `branch` from remote `name` with the system git, into a ref of
  /// its own under ``SystemGit/incomingNamespace``: the tip is untrusted
  /// until the caller has validated it and calls ``acceptFetched(remote:branch:tip:)``.
  /// - Returns: the fetched tip, or nil if the remote has no such branch yet.
  /// - Parameter sshKey: an ssh key to offer besides those ssh finds.
  func fetch(remote name: String, branch: String, sshKey: String?) throws -> GitOID? {
    let url = try configuredRemoteURL(name)
    let git = SystemGit(gitDirectory: gitDirectory, sshKey: sshKey)
    // A partial clone's remote is fetched by `git fetch`, which applies
    // the clone's filter and marks what arrives as the remote's to fill in.
    if config("remote.\(name).vcs") == nil, config("remote.\(name).promisor") != "true",
      let native = try git.fetchURL(remote: name),
      SystemGit.speaksNatively(native)
    {
      let incoming = SystemGit.incomingNamespace + name + "/" + branch
      return try GitRefLocks.writing(gitDirectory: gitDirectory) {
        guard
          let tip = try git.fetchPack(
            url: native, uploadPack: config("remote.\(name).uploadpack"), remote: name, branch: branch,
            shownURL: url)
        else { return nil }
        guard let id = GitOID(hex: tip), (try? commit(id)) != nil else {
          throw FolioError(
            .remote, "remote '\(name)' names \(tip) as its branch '\(branch)', which is not a commit it sent",
            function: "git fetch-pack")
        }
        // As `git fetch` does on a lock: a git that an interrupted Folio
        // started may hold it for a moment; one that stays is reported.
        var tries = 0
        while true {
          tries += 1
          do {
            try setReference(incoming, to: id, message: "folio sync: fetch")
            return id
          } catch let error as FolioError where error.code == .locked && tries < 6 {
            usleep(UInt32(50_000 * tries * tries))
          } catch let error as FolioError where error.code == .locked {
            throw SystemGit.locked(incoming, said: error.message)
          }
        }
      }
    }
    let incoming = try GitRefLocks.writing(gitDirectory: gitDirectory) {
      try git.fetch(remote: name, branch: branch, url: url)
    }
    return try incoming.flatMap { try referenceID($0) }
  }

  /// Moves `refs/remotes/<remote>/<branch>` to a fetched tip Folio has
  /// validated and merged, as `git fetch` would have moved it.
  ///
  /// The ref only tells people what was last fetched; the merge already
  /// landed. So a ref another writer holds locked at that moment (a push
  /// of this store, which moves it too, or the user's own git) is left to
  /// that writer rather than failing a sync that has done its work.
  func acceptFetched(remote: String, branch: String, tip: GitOID) throws {
    do {
      try GitRefLocks.writing(gitDirectory: gitDirectory) {
        try setReference("refs/remotes/\(remote)/\(branch)", to: tip, message: "folio sync: fetch")
      }
    } catch let error as FolioError where error.code == .locked {
      return
    }
  }

  /// Pushes local `branch` to `remoteBranch` (by default the same name) on
  /// remote `name` with the system git.
  /// - Throws: ``PushRefusal`` when the remote did not take the update, as
  ///   `git push --porcelain` reports it for the ref; `FolioError` for
  ///   anything else.
  func push(remote name: String, branch: String, to remoteBranch: String? = nil, sshKey: String?) throws {
    let url = try configuredRemoteURL(name)
    let git = SystemGit(gitDirectory: gitDirectory, sshKey: sshKey)
    try GitRefLocks.writing(gitDirectory: gitDirectory) {
      try git.push(remote: name, branch: branch, to: remoteBranch ?? branch, url: url)
    }
  }

  /// Clones `url` into `path` with the system git, without checking
  /// anything out: the fetched tree is untrusted, and the caller validates
  /// it before writing a file (``TreePathValidator``).
  /// - Parameter sshKey: an ssh key to offer besides those ssh finds.
  /// - Parameter partial: fetch no blob (see ``SystemGit/clone(url:into:partial:)``).
  static func clone(url: String, into path: String, sshKey: String?, partial: Bool = false) throws
    -> GitRepository
  {
    try SystemGit(gitDirectory: nil, sshKey: sshKey).clone(url: url, into: path, partial: partial)
    guard let repository = try GitRepository.open(workTree: path) else {
      throw FolioError(.git, "git clone made no repository in \(path)", path: path, function: "git clone")
    }
    return repository
  }
}

extension GitRepository {
  /// Whether this repository is a partial clone of remote `name`: one
  /// that left objects on the remote to fetch when wanted.
  func isPartialClone(of name: String) -> Bool { config("remote.\(name).promisor") == "true" }

  /// Fetches from remote `name` those of `ids` this repository lacks.
  /// - Returns: how many it fetched.
  @discardableResult
  func fetchMissing(_ ids: [GitOID], remote name: String, sshKey: String?) throws -> Int {
    var seen = Set<GitOID>()
    var missing: [GitOID] = []
    for id in ids where seen.insert(id).inserted {
      if try !containsWithoutRescan(id) { missing.append(id) }
    }
    guard !missing.isEmpty else { return 0 }
    let url = try configuredRemoteURL(name)
    try SystemGit(gitDirectory: gitDirectory, sshKey: sshKey).fetchObjects(
      missing.map(\.description), remote: name, url: url)
    return missing.count
  }
}

extension GitRepository {
  /// The remote and remote branch that `branch` syncs with: its upstream
  /// (`branch.<name>.remote`, `branch.<name>.merge`) when `remote` is nil
  /// or names the upstream's remote; otherwise `remote` (default `origin`)
  /// and a branch of the same name, as `git pull REMOTE` does.
  func upstream(of branch: String, remote: String?) -> (remote: String, branch: String) {
    let upstreamRemote = config("branch.\(branch).remote")
    let merge = config("branch.\(branch).merge")
    let name = remote ?? (upstreamRemote == "." ? nil : upstreamRemote) ?? "origin"
    if name == upstreamRemote, let merge, merge.hasPrefix("refs/heads/") {
      return (name, String(merge.dropFirst("refs/heads/".count)))
    }
    return (name, branch)
  }
}
