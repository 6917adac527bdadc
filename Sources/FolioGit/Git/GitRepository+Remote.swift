internal import Clibgit2
import FolioSystem
import Foundation

/// What the remote callbacks learned during one fetch or push. Owned by the
/// call that made it, and only touched on that call's thread.
private final class TransferState {
  let remoteName: String
  /// The ssh private key `FOLIO_SSH_KEY` or `ssh-key` under `sync:` names.
  let sshKey: String?
  let environment = ProcessInfo.processInfo.environment
  var passwordAttempts = 0
  var rejections: [String] = []
  var credentialProblem: String?
  var hostKeyProblem: String?
  /// An ssh config that cannot be followed, found before connecting.
  var setupError: FolioError?
  /// The ssh remote as resolved through `~/.ssh/config`, if it is one.
  var endpoint: SSHEndpoint?
  var plan: SSHCredentialPlan?

  init(remoteName: String, sshKey: String?) {
    self.remoteName = remoteName
    self.sshKey = sshKey
  }

  /// Sets the callbacks that find credentials, judge host keys and point
  /// libgit2 at the real ssh host, with this state as their payload.
  func install(_ callbacks: inout git_remote_callbacks) {
    callbacks.credentials = acquireCredential
    callbacks.certificate_check = checkHostKey
    callbacks.remote_ready = resolveRemote
    callbacks.payload = Unmanaged.passUnretained(self).toOpaque()
  }

  /// The error the callbacks explain better than libgit2's message, if any.
  func failure(_ function: StaticString, libgit2Message: String) -> FolioError? {
    if let setupError { return setupError }
    if let hostKeyProblem { return FolioError(.hostKey, hostKeyProblem, function: "\(function)") }
    if let credentialProblem { return FolioError(.credentials, credentialProblem, function: "\(function)") }
    // libssh2 cannot open the key (a wrong passphrase, an unknown format)
    // and gives up on the whole connection.
    if let plan, let key = plan.lastKey, libgit2Message.contains("key") {
      return FolioError(
        .credentials,
        "cannot use the ssh key \(key) for remote '\(remoteName)': \(libgit2Message); if it is encrypted, "
          + "check FOLIO_SSH_PASSPHRASE. Tried: \(plan.summary)",
        function: "\(function)")
    }
    return nil
  }
}

/// Points libgit2 at the host, port and user that `~/.ssh/config` gives
/// for an ssh remote. Only this connection's URL changes, never the
/// remote's URL in `.git/config`.
private func resolveRemote(_ remote: OpaquePointer?, _ direction: Int32, _ payload: UnsafeMutableRawPointer?)
  -> Int32
{
  guard let payload, let remote else { return 0 }
  let state = Unmanaged<TransferState>.fromOpaque(payload).takeUnretainedValue()
  let push = direction == Int32(GIT_DIRECTION_PUSH.rawValue)
  guard let url = (push ? git_remote_pushurl(remote) : nil) ?? git_remote_url(remote) else { return 0 }
  do {
    guard
      let endpoint = try SSHEndpoint(
        url: String(cString: url), namedKey: state.sshKey, environment: state.environment)
    else { return 0 }
    state.endpoint = endpoint
    state.plan = SSHCredentialPlan(endpoint: endpoint, environment: state.environment)
    let rc =
      push
      ? git_remote_set_instance_pushurl(remote, endpoint.libgit2URL)
      : git_remote_set_instance_url(remote, endpoint.libgit2URL)
    return rc
  } catch let error as FolioError {
    state.setupError = error
    return GIT_EUSER.rawValue
  } catch {
    return GIT_EUSER.rawValue
  }
}

/// Accepts an ssh host key only if a known_hosts file lists it, and
/// otherwise explains the refusal with the key's type and fingerprint.
/// libgit2 has already looked in `$HOME/.ssh/known_hosts`; the other files
/// the user's ssh reads are checked here. TLS certificates keep libgit2's
/// own verdict.
private func checkHostKey(
  _ cert: UnsafeMutablePointer<git_cert>?, _ valid: Int32, _ host: UnsafePointer<CChar>?,
  _ payload: UnsafeMutableRawPointer?
) -> Int32 {
  guard let cert, let payload, cert.pointee.cert_type == GIT_CERT_HOSTKEY_LIBSSH2 else {
    return GIT_PASSTHROUGH.rawValue
  }
  if valid != 0 { return 0 }
  let state = Unmanaged<TransferState>.fromOpaque(payload).takeUnretainedValue()
  let hostname = host.map { String(cString: $0) } ?? state.endpoint?.host ?? "?"
  let port = state.endpoint?.port ?? 22
  let hostkey = UnsafeMutableRawPointer(cert).assumingMemoryBound(to: git_cert_hostkey.self).pointee
  var key: [UInt8] = []
  if hostkey.type.rawValue & GIT_CERT_SSH_RAW.rawValue != 0, let raw = hostkey.hostkey {
    key = Array(UnsafeRawBufferPointer(start: raw, count: hostkey.hostkey_len))
  }
  let files = state.endpoint?.knownHostsFiles ?? [SSHEndpoint.home(state.environment) + "/.ssh/known_hosts"]
  let verdict = SSHKnownHosts.verdict(host: hostname, port: port, key: key, files: files)
  if verdict == .known && !key.isEmpty { return 0 }
  var fingerprint = "(no SHA256 fingerprint available)"
  if hostkey.type.rawValue & GIT_CERT_SSH_SHA256.rawValue != 0 {
    fingerprint = SSHKnownHosts.fingerprint(sha256: withUnsafeBytes(of: hostkey.hash_sha256) { Array($0) })
  }
  state.hostKeyProblem =
    "remote '\(state.remoteName)': "
    + SSHKnownHosts.refusal(
      verdict, host: hostname, port: port, type: SSHKnownHosts.keyType(key), fingerprint: fingerprint,
      alias: state.endpoint?.alias ?? hostname)
  return GIT_ECERTIFICATE.rawValue
}

/// Offers credentials: over ssh, the ``SSHCredentialPlan``'s, one per call
/// (libgit2 asks again after each refusal); over https,
/// `FOLIO_GIT_USERNAME` with `FOLIO_GIT_PASSWORD` or `FOLIO_GIT_TOKEN`.
/// Secrets are never logged.
private func acquireCredential(
  _ out: UnsafeMutablePointer<OpaquePointer?>?, _ url: UnsafePointer<CChar>?,
  _ usernameFromURL: UnsafePointer<CChar>?, _ allowed: UInt32, _ payload: UnsafeMutableRawPointer?
) -> Int32 {
  guard let payload else { return GIT_PASSTHROUGH.rawValue }
  let state = Unmanaged<TransferState>.fromOpaque(payload).takeUnretainedValue()
  let environment = state.environment
  let user =
    usernameFromURL.map { String(cString: $0) } ?? state.endpoint?.user ?? environment["FOLIO_GIT_USERNAME"]
    ?? "git"
  if allowed & GIT_CREDENTIAL_USERNAME.rawValue != 0 {
    return git_credential_username_new(out, user)
  }
  if allowed & GIT_CREDENTIAL_SSH_KEY.rawValue != 0 {
    if state.plan == nil, let url {
      // No remote_ready call came (it always does in libgit2 1.5); resolve
      // from the URL libgit2 is using.
      let endpoint = try? SSHEndpoint(
        url: String(cString: url), namedKey: state.sshKey, environment: environment)
      state.plan = endpoint.map { SSHCredentialPlan(endpoint: $0, environment: environment) }
    }
    if let plan = state.plan {
      switch plan.next() {
      case .agent?: return git_credential_ssh_key_from_agent(out, user)
      case .key(let path, let publicKey, let passphrase)?:
        return git_credential_ssh_key_new(out, user, publicKey, path, passphrase)
      case nil:
        let host = state.endpoint.map { "\($0.host) port \($0.port)" } ?? "the server"
        state.credentialProblem =
          "remote '\(state.remoteName)': cannot log in to \(host) as '\(user)' over ssh. Tried: "
          + plan.summary
          + ". Add your key to an ssh agent, name it in FOLIO_SSH_KEY (or 'ssh-key' under 'sync:' in "
          + "folio.yaml, or IdentityFile in ~/.ssh/config), and set FOLIO_SSH_PASSPHRASE for an encrypted key"
        return GIT_EUSER.rawValue
      }
    }
  }
  state.passwordAttempts += 1
  if allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT.rawValue != 0, state.passwordAttempts == 1 {
    if let secret = environment["FOLIO_GIT_TOKEN"] ?? environment["FOLIO_GIT_PASSWORD"], !secret.isEmpty {
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
    var message = "libgit2 error \(rc)"
    if let error = git_error_last(), let text = error.pointee.message { message = String(cString: text) }
    if let failure = state.failure(function, libgit2Message: message) { return failure }
    // The remote was reached; a local ref's lock is in the way.
    if rc == GIT_ELOCKED.rawValue { return LibGit2.lockedError(message, function: function) }
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
    state.install(&options.callbacks)
    let tracking = "refs/remotes/\(name)/\(branch)"
    let refspec = "+refs/heads/\(branch):\(tracking)"
    let rc = try GitRefLocks.writing(gitDirectory: gitDirectory) {
      withExtendedLifetime(state) {
        Self.withRefspecs([refspec]) { git_remote_fetch(remote, $0, &options, "folio sync: fetch") }
      }
    }
    if rc < 0 { throw remoteError(rc, "git_remote_fetch", remote: name, state: state) }
    return try referenceID(tracking)
  }

  /// Pushes local `branch` to `remoteBranch` (by default the same name) on
  /// remote `name`.
  /// - Throws: ``PushRefusal`` when the remote did not take the update,
  ///   told apart by libgit2's return code and the remote's per-ref status,
  ///   never by message text (libgit2 reports a remote's refusal only
  ///   through a callback and returns success, so that verdict is checked
  ///   here); `FolioError` for anything else.
  func push(remote name: String, branch: String, to remoteBranch: String? = nil, sshKey: String?) throws {
    let remote = try lookupRemote(name)
    defer { git_remote_free(remote) }
    let state = TransferState(remoteName: name, sshKey: sshKey)
    var options = git_push_options()
    try LibGit2.check(
      git_push_options_init(&options, UInt32(GIT_PUSH_OPTIONS_VERSION)), "git_push_options_init")
    state.install(&options.callbacks)
    options.callbacks.push_update_reference = { reference, status, payload in
      if let status, let payload {
        let state = Unmanaged<TransferState>.fromOpaque(payload).takeUnretainedValue()
        state.rejections.append("\(reference.map { String(cString: $0) } ?? "?"): \(String(cString: status))")
      }
      return 0
    }
    let refspec = "refs/heads/\(branch):refs/heads/\(remoteBranch ?? branch)"
    let rc = try GitRefLocks.writing(gitDirectory: gitDirectory) {
      withExtendedLifetime(state) {
        Self.withRefspecs([refspec]) { git_remote_push(remote, $0, &options) }
      }
    }
    if rc < 0 {
      var message = "libgit2 error \(rc)"
      if let error = git_error_last(), let text = error.pointee.message { message = String(cString: text) }
      // The remote's tip is not one this push builds on: it moved on.
      if rc == GIT_ENONFASTFORWARD.rawValue { throw PushRefusal(reason: .remoteAhead, detail: message) }
      // Another push holds the remote's ref (a file:// remote is written
      // in place), or one of this replica's refs.
      if rc == GIT_ELOCKED.rawValue { throw PushRefusal(reason: .busy, detail: message) }
      throw remoteError(rc, "git_remote_push", remote: name, state: state)
    }
    if !state.rejections.isEmpty {
      throw PushRefusal(reason: .refused, detail: state.rejections.joined(separator: "; "))
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
    state.install(&options.fetch_opts.callbacks)
    var repository: OpaquePointer?
    let rc = withExtendedLifetime(state) { git_clone(&repository, url, path, &options) }
    if rc < 0 {
      var message = "libgit2 error \(rc)"
      if let error = git_error_last(), let text = error.pointee.message { message = String(cString: text) }
      if let failure = state.failure("git_clone", libgit2Message: message) { throw failure }
      throw FolioError(.remote, "cannot clone \(url): \(message)", path: path, function: "git_clone")
    }
    return GitRepository(handle: repository!)
  }
}
