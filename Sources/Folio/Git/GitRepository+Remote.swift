internal import Clibgit2
import Foundation

/// What the remote callbacks learned during one fetch or push. Owned by the
/// call that made it, and only touched on that call's thread.
private final class TransferState {
  let remoteName: String
  /// The ssh private key to offer after the agent (its `.pub` beside it).
  let sshKey: String?
  var credentialAttempts = 0
  var rejections: [String] = []
  var credentialProblem: String?

  init(remoteName: String, sshKey: String?) {
    self.remoteName = remoteName
    self.sshKey = sshKey
  }
}

/// Looks for credentials, in order: the ssh agent, the ssh key the caller
/// resolved (`FOLIO_SSH_KEY`, else `ssh-key` under `sync:` in folio.yaml),
/// then `FOLIO_GIT_USERNAME` with `FOLIO_GIT_PASSWORD` or `FOLIO_GIT_TOKEN`
/// for https. Secrets are never logged.
private func acquireCredential(
  _ out: UnsafeMutablePointer<OpaquePointer?>?, _ url: UnsafePointer<CChar>?,
  _ usernameFromURL: UnsafePointer<CChar>?, _ allowed: UInt32, _ payload: UnsafeMutableRawPointer?
) -> Int32 {
  guard let payload else { return GIT_PASSTHROUGH.rawValue }
  let state = Unmanaged<TransferState>.fromOpaque(payload).takeUnretainedValue()
  state.credentialAttempts += 1
  let environment = ProcessInfo.processInfo.environment
  let user = usernameFromURL.map { String(cString: $0) } ?? environment["FOLIO_GIT_USERNAME"] ?? "git"
  // libgit2 asks again after each failed attempt: give each source one try.
  let attempt = state.credentialAttempts
  if allowed & GIT_CREDENTIAL_SSH_KEY.rawValue != 0 {
    if attempt == 1 { return git_credential_ssh_key_from_agent(out, user) }
    if attempt == 2, let key = state.sshKey {
      guard FileSystem.isRegularFile(key) else {
        state.credentialProblem =
          "remote '\(state.remoteName)' needs an ssh key, and the key file \(key) does not exist; "
          + "fix FOLIO_SSH_KEY or 'ssh-key' under 'sync:' in folio.yaml"
        return GIT_EUSER.rawValue
      }
      let publicKey = FileSystem.isRegularFile(key + ".pub") ? key + ".pub" : nil
      return git_credential_ssh_key_new(out, user, publicKey, key, environment["FOLIO_SSH_PASSPHRASE"])
    }
  }
  if allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT.rawValue != 0, attempt <= 2 {
    if let secret = environment["FOLIO_GIT_TOKEN"] ?? environment["FOLIO_GIT_PASSWORD"] {
      return git_credential_userpass_plaintext_new(out, environment["FOLIO_GIT_USERNAME"] ?? user, secret)
    }
  }
  state.credentialProblem =
    "remote '\(state.remoteName)' needs credentials: start an ssh agent with your key, name a key file in FOLIO_SSH_KEY or as 'ssh-key' under 'sync:' in folio.yaml, or set FOLIO_GIT_USERNAME and FOLIO_GIT_TOKEN for https"
  return GIT_EUSER.rawValue
}

extension GitRepository {
  private func lookupRemote(_ name: String) throws -> OpaquePointer {
    var remote: OpaquePointer?
    let rc = git_remote_lookup(&remote, handle, name)
    if rc == GIT_ENOTFOUND.rawValue || rc == GIT_EINVALIDSPEC.rawValue {
      throw FolioError(
        .remote, "no remote named '\(name)'; add one with 'git remote add \(name) URL'",
        function: "git_remote_lookup")
    }
    try LibGit2.check(rc, "git_remote_lookup")
    return remote!
  }

  /// The URL of remote `name`, for messages.
  func remoteURL(_ name: String) -> String? {
    var remote: OpaquePointer?
    guard git_remote_lookup(&remote, handle, name) == 0 else { return nil }
    defer { git_remote_free(remote) }
    return git_remote_url(remote).map { String(cString: $0) }
  }

  private func remoteError(_ rc: Int32, _ function: StaticString, remote name: String, state: TransferState)
    -> FolioError
  {
    if let problem = state.credentialProblem {
      return FolioError(.credentials, problem, function: "\(function)")
    }
    var message = "libgit2 error \(rc)"
    if let error = git_error_last(), let text = error.pointee.message { message = String(cString: text) }
    let url = remoteURL(name).map { " (\($0))" } ?? ""
    return FolioError(
      .remote,
      "cannot reach remote '\(name)'\(url): \(message); check the URL and your network, then run the command again",
      function: "\(function)")
  }

  /// Lends `refspecs` to C as a `git_strarray`.
  private static func withRefspecs(
    _ refspecs: [String], _ body: (UnsafeMutablePointer<git_strarray>) -> Int32
  ) -> Int32 {
    var pointers = refspecs.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeMutableBufferPointer { buffer in
      var array = git_strarray(strings: buffer.baseAddress, count: buffer.count)
      return body(&array)
    }
  }

  /// Fetches `branch` from remote `name` into `refs/remotes/<name>/<branch>`.
  /// - Returns: the fetched tip, or nil if the remote has no such branch yet.
  /// - Parameter sshKey: the ssh private key to offer after the agent.
  func fetch(remote name: String, branch: String, sshKey: String?) throws -> GitOID? {
    let remote = try lookupRemote(name)
    defer { git_remote_free(remote) }
    let state = TransferState(remoteName: name, sshKey: sshKey)
    var options = git_fetch_options()
    try LibGit2.check(
      git_fetch_options_init(&options, UInt32(GIT_FETCH_OPTIONS_VERSION)), "git_fetch_options_init")
    options.callbacks.credentials = acquireCredential
    options.callbacks.payload = Unmanaged.passUnretained(state).toOpaque()
    let tracking = "refs/remotes/\(name)/\(branch)"
    let refspec = "+refs/heads/\(branch):\(tracking)"
    let rc = withExtendedLifetime(state) {
      Self.withRefspecs([refspec]) { git_remote_fetch(remote, $0, &options, "folio sync: fetch") }
    }
    if rc < 0 { throw remoteError(rc, "git_remote_fetch", remote: name, state: state) }
    return try referenceID(tracking)
  }

  /// Pushes local `branch` to the same branch on remote `name`.
  /// - Throws: `PUSH_REJECTED` when the remote refuses the update. libgit2
  ///   reports that only through a callback and returns success, so the
  ///   callback's verdict is checked here.
  func push(remote name: String, branch: String, sshKey: String?) throws {
    let remote = try lookupRemote(name)
    defer { git_remote_free(remote) }
    let state = TransferState(remoteName: name, sshKey: sshKey)
    var options = git_push_options()
    try LibGit2.check(
      git_push_options_init(&options, UInt32(GIT_PUSH_OPTIONS_VERSION)), "git_push_options_init")
    options.callbacks.credentials = acquireCredential
    options.callbacks.push_update_reference = { reference, status, payload in
      if let status, let payload {
        let state = Unmanaged<TransferState>.fromOpaque(payload).takeUnretainedValue()
        state.rejections.append("\(reference.map { String(cString: $0) } ?? "?"): \(String(cString: status))")
      }
      return 0
    }
    options.callbacks.payload = Unmanaged.passUnretained(state).toOpaque()
    let refspec = "refs/heads/\(branch):refs/heads/\(branch)"
    let rc = withExtendedLifetime(state) {
      Self.withRefspecs([refspec]) { git_remote_push(remote, $0, &options) }
    }
    if rc < 0 {
      var message = ""
      if let error = git_error_last(), let text = error.pointee.message { message = String(cString: text) }
      if message.contains("non-fast-forward") || message.contains("rejected") {
        throw FolioError(
          .pushRejected, "remote '\(name)' rejected the push: \(message)", function: "git_remote_push")
      }
      throw remoteError(rc, "git_remote_push", remote: name, state: state)
    }
    if !state.rejections.isEmpty {
      throw FolioError(
        .pushRejected, "remote '\(name)' rejected the push: " + state.rejections.joined(separator: "; "),
        function: "git_remote_push")
    }
  }

  /// Clones `url` into `path`, without checking anything out: the
  /// fetched tree is untrusted, and the caller validates it before writing
  /// a file (``TreePathValidator``).
  /// - Parameter sshKey: the ssh private key to offer after the agent.
  static func clone(url: String, into path: String, sshKey: String?) throws -> GitRepository {
    _ = LibGit2.initialized
    let state = TransferState(remoteName: "origin", sshKey: sshKey)
    var options = git_clone_options()
    try LibGit2.check(
      git_clone_options_init(&options, UInt32(GIT_CLONE_OPTIONS_VERSION)), "git_clone_options_init")
    options.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE.rawValue
    options.fetch_opts.callbacks.credentials = acquireCredential
    options.fetch_opts.callbacks.payload = Unmanaged.passUnretained(state).toOpaque()
    var repository: OpaquePointer?
    let rc = withExtendedLifetime(state) { git_clone(&repository, url, path, &options) }
    if rc < 0 {
      if let problem = state.credentialProblem {
        throw FolioError(.credentials, problem, function: "git_clone")
      }
      var message = "libgit2 error \(rc)"
      if let error = git_error_last(), let text = error.pointee.message { message = String(cString: text) }
      throw FolioError(.remote, "cannot clone \(url): \(message)", path: path, function: "git_clone")
    }
    return GitRepository(handle: repository!)
  }
}
