import FolioSystem
import Foundation
import Glibc
import Synchronization

/// Fetch, push and clone through the system `git`, with the user's own
/// config and environment: credential helpers, `~/.ssh/config` (aliases,
/// `ProxyJump`, certificates, hardware keys), `core.sshCommand`, proxies,
/// `url.<base>.insteadOf` and custom CAs all work as they do for
/// `git push`. libgit2 keeps everything else: objects, trees, the index and
/// merges.
///
/// Every run is made safe for what a remote may send: `LC_ALL=C` (so its
/// messages are read in one language), `transfer.fsckObjects` (git refuses
/// malformed objects and trees with `.git` or `..` entries before they are
/// stored), and no hooks (`core.hooksPath=/dev/null`). What a fetch brings
/// lands under ``incomingNamespace`` and is validated by Folio before
/// anything is checked out or merged.
///
/// A prompt for a password or passphrase goes to the terminal when there
/// is one; without one, git and ssh are told not to ask, so a run never
/// waits for an answer that cannot come.
struct SystemGit {
  /// The oldest git this works with: `GIT_CONFIG_COUNT` (2.31) passes
  /// settings without putting them on a command line.
  static let minimumVersion = (2, 31)

  /// Where fetched tips wait while Folio validates them:
  /// `refs/folio/incoming/<remote>/<branch>`. The remote-tracking ref moves
  /// only once the tip is accepted.
  static let incomingNamespace = "refs/folio/incoming/"

  /// The repository's git directory, or nil for a clone not made yet.
  var gitDirectory: String?
  /// The ssh key `FOLIO_SSH_KEY` or `ssh-key` under `sync:` names, offered
  /// besides those ssh finds itself.
  var sshKey: String?
  /// The environment git runs in (the process's, by default).
  var environment = ProcessInfo.processInfo.environment

  /// The `git` found on `PATH` and its version, checked once per process.
  private static let checked = Mutex<Result<String, FolioError>?>(nil)

  /// Checks that a usable git is on `PATH`.
  /// - Throws: `REMOTE` naming what is missing and how to get it.
  static func checkVersion(environment: [String: String]) throws {
    let result = checked.withLock { cached -> Result<String, FolioError> in
      if let cached { return cached }
      let found = Result { try probe(environment: environment) }.mapError {
        $0 as? FolioError ?? FolioError(.remote, "\($0)")
      }
      cached = found
      return found
    }
    _ = try result.get()
  }

  private static func probe(environment: [String: String]) throws -> String {
    let output: Subprocess.Result
    do {
      output = try Subprocess.run(
        "git", ["version"], environment: environment.merging(["LC_ALL": "C"]) { $1 })
    } catch {
      throw FolioError(
        .remote,
        "Folio fetches and pushes with git, and there is no 'git' on PATH; install git "
          + "\(minimumVersion.0).\(minimumVersion.1) or later (apt-get install git)", function: "git version")
    }
    let text = output.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
    let numbers =
      text.split(separator: " ").dropFirst(2).first?.split(separator: ".").compactMap { Int($0) } ?? []
    guard output.status == 0, numbers.count >= 2 else {
      throw FolioError(.remote, "cannot tell the version of git from '\(text)'", function: "git version")
    }
    guard (numbers[0], numbers[1]) >= minimumVersion else {
      throw FolioError(
        .remote,
        "Folio needs git \(minimumVersion.0).\(minimumVersion.1) or later for fetch and push; "
          + "this is \(text): upgrade git", function: "git version")
    }
    return text
  }

  /// Runs `git` with `arguments` after Folio's own settings.
  func run(_ arguments: [String]) throws -> Subprocess.Result {
    try run(arguments, forwardingStderr: false)
  }

  /// Runs a transfer, `git <command> <options> -- <operands>`, with
  /// `--progress` and git's stderr shown on this process's stderr when that
  /// is a terminal, as git itself does.
  func transfer(_ command: String, _ options: [String], operands: [String]) throws -> Subprocess.Result {
    let progress = Self.stderrIsTerminal
    return try run(
      [command] + options + (progress ? ["--progress"] : []) + ["--"] + operands, forwardingStderr: progress)
  }

  /// Runs `arguments` as they are, with `settings` after Folio's own, and
  /// git's stderr shown when it is a terminal.
  func run(_ arguments: [String], settings: [(String, String)], forwardingStderr: Bool) throws
    -> Subprocess.Result
  {
    try run(arguments, forwardingStderr: forwardingStderr, settings: settings)
  }

  private func run(_ arguments: [String], forwardingStderr: Bool, settings: [(String, String)] = []) throws
    -> Subprocess.Result
  {
    try Self.checkVersion(environment: environment)
    var prefix: [String] = []
    if let gitDirectory { prefix += ["--git-dir=" + gitDirectory] }
    let forward: (([UInt8]) -> Void)? =
      forwardingStderr
      ? { chunk in chunk.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) } } : nil
    return try Subprocess.run(
      "git", prefix + arguments, environment: runEnvironment(adding: settings), onStderr: forward)
  }

  /// Whether git's progress should be shown: stderr is a terminal.
  static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

  /// Whether git and ssh can ask the user anything: there is a controlling
  /// terminal to ask on.
  static var canPrompt: Bool {
    let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else { return false }
    close(fd)
    return true
  }
}

extension SystemGit {
  /// Folio's settings for one run, passed in the environment
  /// (`GIT_CONFIG_COUNT`), never on the command line, and after the
  /// user's: hooks off, objects checked, and the conveniences
  /// `FOLIO_SSH_KEY` and `FOLIO_GIT_TOKEN` mapped onto git's own ways.
  func runEnvironment(adding extra: [(String, String)] = []) -> [String: String] {
    var variables = environment
    // Messages in one language, whatever the user's locale, so that the
    // few that must be told apart can be.
    variables["LC_ALL"] = "C"
    variables["LANGUAGE"] = nil
    // Set but empty means unset, as for Folio's own variables; git would
    // try to run a program named "".
    for name in ["GIT_SSH_COMMAND", "GIT_SSH", "SSH_ASKPASS"] where variables[name]?.isEmpty == true {
      variables[name] = nil
    }
    var settings: [(String, String)] = [
      ("core.hooksPath", "/dev/null"),
      ("transfer.fsckObjects", "true"),
      ("fetch.fsckObjects", "true"),
      ("receive.fsckObjects", "true"),
      // A fetch must not start a background gc that outlives it.
      ("gc.auto", "0"),
      ("maintenance.auto", "false"),
    ]
    if nonEmpty(variables["FOLIO_GIT_TOKEN"]) != nil || nonEmpty(variables["FOLIO_GIT_PASSWORD"]) != nil {
      // A helper after the user's own: it answers from the environment,
      // so the secret is never written or put on a command line.
      settings.append(
        (
          "credential.helper",
          #"!f() { test "$1" = get || exit 0; echo "username=${FOLIO_GIT_USERNAME:-git}"; "#
            + #"echo "password=${FOLIO_GIT_TOKEN:-$FOLIO_GIT_PASSWORD}"; }; f"#
        ))
    }
    settings += extra
    let count = Int(variables["GIT_CONFIG_COUNT"] ?? "") ?? 0
    for (offset, (key, value)) in settings.enumerated() {
      variables["GIT_CONFIG_KEY_\(count + offset)"] = key
      variables["GIT_CONFIG_VALUE_\(count + offset)"] = value
    }
    variables["GIT_CONFIG_COUNT"] = String(count + settings.count)
    if let sshKey {
      // The user's ssh command, with the key added: `-i` adds to the keys
      // ssh tries, after the agent's.
      let base =
        nonEmpty(variables["GIT_SSH_COMMAND"]) ?? configuredSSHCommand().flatMap(nonEmpty)
        ?? nonEmpty(variables["GIT_SSH"]).map(shellWord) ?? "ssh"
      variables["GIT_SSH_COMMAND"] = base + " -i " + shellWord(sshKey)
    }
    if nonEmpty(variables["FOLIO_SSH_PASSPHRASE"]) != nil, let askpass = try? Self.askpassScript() {
      // ssh reads a passphrase only from a terminal or an askpass program:
      // this one answers from the environment.
      variables["SSH_ASKPASS"] = askpass
      variables["SSH_ASKPASS_REQUIRE"] = "force"
    }
    if !Self.canPrompt {
      // Nobody to answer: fail at once rather than wait.
      variables["GIT_TERMINAL_PROMPT"] = "0"
      if variables["SSH_ASKPASS_REQUIRE"] == nil { variables["SSH_ASKPASS_REQUIRE"] = "never" }
    }
    return variables
  }

  /// `core.sshCommand` as the user configured it, if at all.
  private func configuredSSHCommand() -> String? {
    var arguments = ["config", "--get", "core.sshCommand"]
    if let gitDirectory { arguments.insert("--git-dir=" + gitDirectory, at: 0) }
    var plain = environment
    plain["LC_ALL"] = "C"
    guard let result = try? Subprocess.run("git", arguments, environment: plain), result.status == 0 else {
      return nil
    }
    return result.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// A program that answers ssh's passphrase question with
  /// `FOLIO_SSH_PASSPHRASE`, written once per process (it holds no secret
  /// itself).
  private static func askpassScript() throws -> String {
    try askpass.withLock { path in
      if let path { return path }
      // A folder of its own (mode 0700), so no other user can swap the file.
      var template = Array((FileManager.default.temporaryDirectory.path + "/folio-XXXXXX").utf8CString)
      guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
        throw FileSystem.error(errno, "mkdtemp", path: "")
      }
      let made =
        String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/askpass"
      // ssh asks askpass every question it has: only a passphrase is
      // answered. Any other (accept an unknown host key?) gets a failure,
      // which ssh takes as no; an answer it does not expect would make it
      // ask again, for ever.
      let script = """
        #!/bin/sh
        case "$1" in
          *assphrase*) printf '%s\\n' "$FOLIO_SSH_PASSPHRASE" ;;
          *) exit 1 ;;
        esac

        """
      try FileSystem.writeAtomically(made, Array(script.utf8), sync: false)
      try FileSystem.syscall("chmod", path: made) { chmod(made, 0o700) }
      path = made
      return made
    }
  }

  private static let askpass = Mutex<String?>(nil)

  private func nonEmpty(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }
}
