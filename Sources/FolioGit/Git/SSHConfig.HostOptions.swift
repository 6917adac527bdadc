extension SSHConfig {
  /// What the config says for one host, values as written (tokens and `~`
  /// are expanded by ``SSHEndpoint``, which knows the user and host).
  struct HostOptions {
    /// `HostName`: the real host to connect to.
    var hostName: String?
    /// `User`: the remote user.
    var user: String?
    /// `Port`: the number (nil if it is not one), the text, and where it was set.
    var port: (number: Int?, text: String, location: String)?
    /// `IdentityFile`s, in order, each with where it was set.
    var identityFiles: [(path: String, location: String)] = []
    /// `IdentitiesOnly yes`: offer only the named files, not the agent's keys.
    var identitiesOnly = false
    /// `UserKnownHostsFile`: replaces `~/.ssh/known_hosts` (and `known_hosts2`).
    var knownHostsFiles: [String]?
    /// Keywords that apply to the host but cannot be honoured, with where.
    var unsupported: [(keyword: String, location: String)] = []
  }
}
