import FolioSystem
import Foundation

extension SystemGit {
  /// `LOCKED` for ref `lock` (such as `refs/heads/main`), whose lock file
  /// another git holds or a killed one left; `said` quotes the failure.
  static func locked(_ lock: String, said: String) -> FolioError {
    FolioError(
      .locked,
      "another git process is updating \(lock) in this repository (\(said)); wait for it to end and run "
        + "the command again. If no git is running, a git killed by kill -9 left its lock file: remove "
        + "the '\(lock).lock' file git names",
      function: "git")
  }

  /// Folio's error for a failed fetch, push or clone.
  ///
  /// git exits 128 for every kind of failure, so the kind is read from its
  /// messages, which `LC_ALL=C` keeps in one language, and from ssh's,
  /// which are never translated:
  /// - a check of `transfer.fsckObjects` (`error: object <id>: <msg-id>:`,
  ///   whose ids git documents under `fsck.<msg-id>`) is `UNSAFE_PATH`;
  /// - ssh's host key check is `HOST_KEY`;
  /// - a login refused, or a password that could not be asked for, is
  ///   `CREDENTIALS`;
  /// - a ref another git holds locked (or a lock a killed git left) is
  ///   `LOCKED`, naming the ref;
  /// - a branch name the remote holds twice, a server setting that refuses
  ///   (a checked-out branch, no filtering, a disabled service) and a URL
  ///   with no repository are `REMOTE`, each with its own fix;
  /// - anything else is `REMOTE`: the network.
  ///
  /// Each quotes git's own lines, which name the cause.
  func error(_ result: Subprocess.Result, remote: String, url: String?) -> FolioError {
    let text = result.errorText
    let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map(String.init)
    let said = Self.quotable(lines)
    let shown = url.map { "remote '\(remote)' (\(Self.withoutPassword($0)))" } ?? "remote '\(remote)'"
    if let check = lines.lazy.compactMap(Self.fsckCheck).first {
      return FolioError(
        .unsafePath,
        "\(shown) sent objects that git's object check refuses (\(check)); nothing was stored. "
          + "The remote's history holds a tree or commit no checkout should write",
        function: "git fetch")
    }
    if text.contains("Host key verification failed")
      || text.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
    {
      // ssh's banner is long; these lines say which key, which file and line.
      let keyLines = lines.filter { line in
        ["CHANGED", "SHA256:", "Offending", "Host key for", "host key is known", "Host key verification"]
          .contains(where: line.contains)
      }.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "@ ")) }
      return FolioError(
        .hostKey,
        "\(shown): ssh refused the server's host key: \(keyLines.joined(separator: " / ")). "
          + "If the server is the one you expect, add its key to ~/.ssh/known_hosts (connect once "
          + "with ssh, or ssh-keyscan), or remove the old one with ssh-keygen -R",
        function: "ssh")
    }
    let refusedLogin = [
      "Permission denied (", "Permission denied, please", "Authentication failed", "could not read Username",
      "could not read Password",
      "terminal prompts disabled", "Invalid username or password", "returned error: 401",
      "returned error: 403",
    ]
    if refusedLogin.contains(where: text.contains) {
      let http = url.map { $0.hasPrefix("http://") || $0.hasPrefix("https://") } ?? false
      let fix =
        http
        ? "give git the credentials as for git push: a credential helper (git config credential.helper "
          + "store, gh auth setup-git, Git Credential Manager), or FOLIO_GIT_USERNAME and FOLIO_GIT_TOKEN"
        : "make the key usable by ssh as for git push: load it into ssh-agent, name it in ~/.ssh/config "
          + "(IdentityFile) or in FOLIO_SSH_KEY, and set FOLIO_SSH_PASSPHRASE for an encrypted key "
          + "when there is no terminal"
      return FolioError(.credentials, "\(shown) refused the login: \(said); \(fix)", function: "git")
    }
    if let lock = Self.refLock(in: lines) { return Self.locked(lock, said: said) }
    if text.contains("matches more than one") || text.contains("is ambiguous") {
      return FolioError(
        .remote,
        "\(shown) has more than one ref the branch's name could mean (\(said)); on the remote, rename or "
          + "delete the extra one (such as a branch literally named 'refs/heads/main', made by a push to "
          + "'refs/heads/refs/heads/main')",
        function: "git")
    }
    if let setting = Self.serverSetting(in: text) {
      return FolioError(.remote, "\(shown) refused by its own settings: \(said); \(setting)", function: "git")
    }
    let missing = [
      "does not appear to be a git repository", "Repository not found", "repository not found",
      "repository not exported",
      "returned error: 404", "not found", "No such file or directory",
    ]
    if missing.contains(where: text.contains) {
      return FolioError(
        .remote, "no git repository at \(shown): \(said); check the URL (git remote -v)", function: "git")
    }
    return FolioError(
      .remote, "cannot reach \(shown): \(said); check the URL and your network, then try again",
      function: "git")
  }

  /// The ref a failure to lock names (`cannot lock ref 'R'`, or a
  /// `.lock` file that exists): another git, or one killed, holds it.
  static func refLock(in lines: [String]) -> String? {
    for line in lines {
      if let start = line.range(of: "cannot lock ref '"),
        let end = line[start.upperBound...].firstIndex(of: "'")
      {
        return String(line[start.upperBound..<end])
      }
      if line.contains("Unable to create '"), line.contains(".lock': File exists"),
        let start = line.range(of: "Unable to create '"),
        let end = line.range(of: ".lock'", range: start.upperBound..<line.endIndex)
      {
        return String(line[start.upperBound..<end.lowerBound])
      }
    }
    return nil
  }

  /// What to change on the server, for a refusal a server setting makes.
  static func serverSetting(in text: String) -> String? {
    if text.contains("refusing to update checked out branch") || text.contains("receive.denyCurrentBranch")
      || text.contains("branch is currently checked out")
    {
      return "the remote is a repository with a work tree and this branch checked out: push to a bare "
        + "repository (git init --bare), or set receive.denyCurrentBranch=updateInstead on the remote"
    }
    if text.contains("filter") && (text.contains("not recognized") || text.contains("not support")) {
      return "the server does not filter what it sends: set uploadpack.allowFilter=true on it"
    }
    if text.contains("not allow request for unadvertised object") {
      return "set uploadpack.allowReachableSHA1InWant=true (or allowAnySHA1InWant) on the server"
    }
    if text.contains("service not enabled") || text.contains("Service not enabled") {
      return "enable the service on the server (git daemon --enable=receive-pack, or http.receivepack)"
    }
    return nil
  }

  /// The fsck check a line of git's reports: `hasDotgit: contains '.git'`.
  static func fsckCheck(_ line: String) -> String? {
    guard let start = line.range(of: "error: object ") ?? line.range(of: "fatal: object ") else { return nil }
    let rest = line[start.upperBound...].split(separator: ":", maxSplits: 1)
    guard rest.count == 2 else { return nil }
    let check = rest[1].trimmingCharacters(in: .whitespaces)
    guard let id = check.split(separator: ":").first, id.allSatisfy({ $0.isLetter || $0.isNumber }) else {
      return nil
    }
    return check
  }

  /// git's `fatal:`/`error:` lines and ssh's, without progress, at most a
  /// few: what the user needs to see of a failure.
  static func quotable(_ lines: [String]) -> String {
    let meaningful = lines.filter { line in
      !line.hasPrefix("remote: Counting") && !line.hasPrefix("remote: Compressing")
        && !line.hasPrefix("Receiving objects") && !line.hasPrefix("Resolving deltas")
        && !line.hasPrefix("hint:") && !line.trimmingCharacters(in: .whitespaces).isEmpty
    }
    let picked = meaningful.filter { $0.hasPrefix("fatal:") || $0.hasPrefix("error:") }
    let chosen = (picked.isEmpty ? meaningful : picked).suffix(3)
    return chosen.isEmpty ? "git gave no reason" : chosen.joined(separator: " / ")
  }

  /// `url` without a password in it, for messages.
  static func withoutPassword(_ url: String) -> String {
    guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else {
      return url
    }
    let userInfo = url[scheme.upperBound..<at]
    guard let colon = userInfo.firstIndex(of: ":") else { return url }
    return String(url[..<colon]) + ":***" + String(url[at...])
  }
}
