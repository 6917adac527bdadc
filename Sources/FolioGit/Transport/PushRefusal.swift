/// Why a remote did not take a push, as ``GitRepository/push(remote:branch:to:sshKey:)``
/// tells from libgit2's return code and the remote's per-ref status.
///
/// `folio sync` answers each by fetching, merging and pushing again, with a
/// jittered pause; a refusal that persists while the remote stands still
/// is the remote's own verdict (a hook, a protected branch) and is reported.
struct PushRefusal: Error {
  enum Reason {
    /// The remote's tip is not in this push's history: someone pushed since
    /// the fetch.
    case remoteAhead
    /// A lock on the remote's ref was held (another push in progress).
    case busy
    /// The remote reported a status for the ref: a race it lost on the
    /// server, or a refusal of the server's own.
    case refused
  }
  var reason: Reason
  /// What libgit2 or the remote said, for the message if the sync gives up.
  var detail: String
}
