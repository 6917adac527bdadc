import FolioSystem
import Foundation

/// Where an ssh remote really is, and which keys may open it: the URL (an
/// `ssh://` URL or git's scp-like `user@host:path`) resolved through
/// `~/.ssh/config` and `GIT_SSH_COMMAND`, as `ssh` would resolve it.
///
/// libgit2 is handed ``libgit2URL``, which spells out the real host, port
/// and user; the URL stored in `.git/config` never changes.
struct SSHEndpoint {
  /// The host as written in the URL (a config alias, perhaps).
  var alias: String
  /// The host to connect to (`HostName`, else the alias).
  var host: String
  /// The port (the URL's, else `Port`, else 22).
  var port: Int
  /// The remote user (the URL's, else `User`, else the local user, as ssh).
  var user: String
  /// The repository path, as `git-upload-pack` is given it.
  var path: String
  /// Key files to offer, in order, each with where it was named.
  var identityFiles: [(path: String, source: String)]
  /// `IdentitiesOnly yes`: the agent is not asked.
  var identitiesOnly: Bool
  /// The known_hosts files the user's ssh reads, in order.
  var knownHostsFiles: [String]

  /// Whether `url` is an ssh URL, in either spelling.
  static func isSSH(_ url: String) -> Bool { (try? split(url)) != nil }

  /// Resolves `url`, or returns nil if it is not an ssh URL.
  /// - Parameters:
  ///   - namedKey: the key `FOLIO_SSH_KEY` or `ssh-key` under `sync:` names.
  ///   - environment: for `HOME`, `USER` and `GIT_SSH_COMMAND`.
  /// - Throws: `REMOTE` for a config that names `ProxyJump` or
  ///   `ProxyCommand` for this host, or a port that is not a number.
  init?(url: String, namedKey: String?, environment: [String: String]) throws {
    guard let parts = try Self.split(url) else { return nil }
    let home = Self.home(environment)
    let command = SSHCommandLine(environment["GIT_SSH_COMMAND"] ?? "")
    let config =
      try command.configFile.map {
        try SSHConfig.load(file: SSHConfig.expandTilde($0, home: home), sshDirectory: home + "/.ssh")
      } ?? SSHConfig.load(home: home)
    let options = config.options(forHost: parts.host, overrides: command.options)
    if let (keyword, location) = options.unsupported.first {
      let name = keyword == "proxyjump" ? "ProxyJump" : "ProxyCommand"
      throw FolioError(
        .remote,
        "\(location): '\(name)' applies to host '\(parts.host)', and Folio cannot follow it: libgit2 "
          + "connects to the ssh server directly. Reach the server without a jump host (a "
          + "'Host' entry with its real 'HostName' and 'Port', or an 'ssh -L' tunnel), or use plain git "
          + "for this remote")
    }
    let localUser = environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.loginName()
    alias = parts.host
    user = parts.user ?? command.user ?? options.user ?? localUser
    var portNumber = parts.port ?? command.port
    if portNumber == nil, let port = options.port {
      guard let number = port.number, (1...65535).contains(number) else {
        throw FolioError(.remote, "\(port.location): 'Port \(port.text)' is not a port number")
      }
      portNumber = number
    }
    port = portNumber ?? 22
    host = options.hostName.map { $0.replacingOccurrences(of: "%h", with: parts.host) } ?? parts.host
    path = parts.path
    identitiesOnly = options.identitiesOnly
    var files: [(String, String)] = []
    if let namedKey { files.append((namedKey, "FOLIO_SSH_KEY")) }
    for key in command.identityFiles {
      files.append((SSHConfig.expandTilde(key, home: home), "GIT_SSH_COMMAND -i"))
    }
    let tokens: [Character: String] = [
      "d": home, "u": localUser, "h": host, "r": user, "p": String(port), "n": alias, "%": "%",
    ]
    for (file, location) in options.identityFiles where file.lowercased() != "none" {
      files.append((SSHConfig.expandTilde(Self.expandTokens(file, tokens), home: home), location))
    }
    identityFiles = files
    knownHostsFiles =
      (options.knownHostsFiles?.map { SSHConfig.expandTilde(Self.expandTokens($0, tokens), home: home) }
        ?? [home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2"])
      + ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]
  }

  /// The URL for libgit2: always `ssh://user@host:port/path`. An scp-like
  /// path that is relative to the remote home becomes `/~/path`, which
  /// libgit2 sends as `~/path`, and git expands.
  var libgit2URL: String {
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
    let escapedUser = user.addingPercentEncoding(withAllowedCharacters: allowed) ?? user
    let hostPart = host.contains(":") ? "[\(host)]" : host
    let fullPath = path.hasPrefix("/") ? path : path.hasPrefix("~") ? "/" + path : "/~/" + path
    return "ssh://\(escapedUser)@\(hostPart):\(port)\(fullPath)"
  }

  /// The default identities ssh tries when nothing else is named.
  static func defaultIdentities(home: String) -> [String] {
    ["id_ed25519", "id_ecdsa", "id_rsa"].map { home + "/.ssh/" + $0 }
  }

  /// `HOME`, as libgit2 reads it for `known_hosts` (ssh itself reads the
  /// password database; they agree unless `HOME` was changed).
  static func home(_ environment: [String: String]) -> String {
    if let home = environment["HOME"], !home.isEmpty {
      return home.count > 1 && home.hasSuffix("/") ? String(home.dropLast()) : home
    }
    guard let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir else { return "/" }
    return String(cString: dir)
  }

  private static func loginName() -> String {
    guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "git" }
    return String(cString: name)
  }

  private static func expandTokens(_ text: String, _ tokens: [Character: String]) -> String {
    var result = ""
    var percent = false
    for character in text {
      if percent {
        result += tokens[character] ?? "%\(character)"
        percent = false
      } else if character == "%" {
        percent = true
      } else {
        result.append(character)
      }
    }
    return percent ? result + "%" : result
  }

  /// The user, host, port and path of an ssh URL, or nil for any other URL.
  /// scp-like means git's rule: no `://`, and a colon before any slash.
  static func split(_ url: String) throws -> (user: String?, host: String, port: Int?, path: String)? {
    let lower = url.lowercased()
    if let scheme = ["ssh://", "ssh+git://", "git+ssh://"].first(where: { lower.hasPrefix($0) }) {
      let rest = url.dropFirst(scheme.count)
      let slash = rest.firstIndex(of: "/") ?? rest.endIndex
      var authority = rest[..<slash]
      var user: String?
      if let at = authority.lastIndex(of: "@") {
        user = String(authority[..<at]).removingPercentEncoding
        authority = authority[authority.index(after: at)...]
      }
      let (host, portText) = hostAndPort(authority)
      var port: Int?
      if let portText, !portText.isEmpty {
        guard let number = Int(portText), (1...65535).contains(number) else {
          throw FolioError(.remote, "\(url): '\(portText)' is not a port number")
        }
        port = number
      }
      guard !host.isEmpty, slash < rest.endIndex else {
        throw FolioError(.remote, "\(url): no host or no path")
      }
      return (user, host, port, String(rest[slash...]))
    }
    guard !url.contains("://") else { return nil }
    if url.hasPrefix("[") {
      // `[user@host:port]:path` and `[::1]:path`, as git reads them.
      guard let close = url.firstIndex(of: "]"), url[url.index(after: close)...].hasPrefix(":") else {
        return nil
      }
      var inside = url[url.index(after: url.startIndex)..<close]
      let path = String(url[url.index(close, offsetBy: 2)...])
      var user: String?
      if let at = inside.lastIndex(of: "@") {
        user = String(inside[..<at])
        inside = inside[inside.index(after: at)...]
      }
      if inside.filter({ $0 == ":" }).count == 1, let colon = inside.firstIndex(of: ":") {
        return (user, String(inside[..<colon]), Int(inside[inside.index(after: colon)...]), path)
      }
      return (user, String(inside), nil, path)
    }
    guard let colon = url.firstIndex(of: ":"), !url[..<colon].contains("/"), colon > url.startIndex else {
      return nil
    }
    var authority = url[..<colon]
    var user: String?
    if let at = authority.lastIndex(of: "@") {
      user = String(authority[..<at])
      authority = authority[authority.index(after: at)...]
    }
    let path = String(url[url.index(after: colon)...])
    guard !authority.isEmpty, !path.isEmpty else { return nil }
    return (user, String(authority), nil, path)
  }

  private static func hostAndPort(_ authority: Substring) -> (String, String?) {
    if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
      let host = String(authority[authority.index(after: authority.startIndex)..<close])
      let rest = authority[authority.index(after: close)...]
      return (host, rest.hasPrefix(":") ? String(rest.dropFirst()) : nil)
    }
    if let colon = authority.lastIndex(of: ":") {
      return (String(authority[..<colon]), String(authority[authority.index(after: colon)...]))
    }
    return (String(authority), nil)
  }
}
