import FolioTestSupport
import Foundation
import Testing

/// ssh remotes against a real OpenSSH server that the suite starts on
/// 127.0.0.1. Every folio and git process gets a temporary
/// `HOME`, so the user's own `~/.ssh` is never read or written.
///
/// Each working case runs `folio clone`, `folio sync` (fetch, merge and
/// push) and a plain `git pull` through the merge driver, over ssh.
@Suite struct SSHRemoteCLITests {
  /// The server and the client keys, shared by the suite: one sshd.
  final class Keys: Sendable {
    let server: SSHServer
    let directory: String
    /// Keys the server trusts: the agent's, a plain one, the default
    /// identity's, the alias's, and one with a passphrase.
    var agent: String { directory + "/agent_key" }
    var plain: String { directory + "/plain_key" }
    var identity: String { directory + "/identity_key" }
    var alias: String { directory + "/alias_key" }
    var encrypted: String { directory + "/encrypted_key" }
    /// A key the server does not trust.
    var wrong: String { directory + "/wrong_key" }
    static let passphrase = "correct horse battery"

    init() throws {
      let template = NSTemporaryDirectory() + "/folio-sshd-" + UUID().uuidString
      try FileManager.default.createDirectory(atPath: template, withIntermediateDirectories: true)
      let directory = URL(fileURLWithPath: template).resolvingSymlinksInPath().path
      self.directory = directory
      for name in ["agent_key", "plain_key", "identity_key", "alias_key", "wrong_key"] {
        try SSHServer.keygen(directory + "/" + name)
      }
      try SSHServer.keygen(directory + "/encrypted_key", passphrase: Self.passphrase)
      let trusted = try ["agent_key", "plain_key", "identity_key", "alias_key", "encrypted_key"].map {
        try String(contentsOfFile: directory + "/" + $0 + ".pub", encoding: .utf8)
          .trimmingCharacters(in: .whitespacesAndNewlines)
      }
      server = try SSHServer(directory: directory + "/server", authorizedKeys: trusted)
    }
  }

  /// Started by the first test that needs it; stopped when the test
  /// process exits (see ``SSHServer``).
  static let keys = Result { try Keys() }

  /// One case's scratch space: a bare repository seeded from replica `a`
  /// over `file://`, a temporary `HOME`, and the environment every ssh
  /// process gets.
  struct Case {
    let keys: Keys
    let scratch: CLIScratch
    var home: String { scratch.path + "/home" }
    var port: Int { keys.server.port }
    var remotePath: String { scratch.path + "/remote.git" }
    var url: String { "ssh://root@127.0.0.1:\(port)\(remotePath)" }
    /// Extra environment for folio, on top of a clean ssh setting.
    var environment: [String: String] = [:]
    /// The options plain git's ssh gets (it reads `~` from the password
    /// database, not `HOME`, so the files are named).
    var sshOptions = ""

    init() throws {
      keys = try SSHRemoteCLITests.keys.get()
      scratch = try CLIScratch(yaml: nil)
      try FileManager.default.createDirectory(
        atPath: scratch.path + "/home/.ssh", withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
      #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
      try scratch.write("a/folio.yaml", GitPullTests.yaml)
      try folio(["init"], in: "a")
      try folio(["put", "todos", "t", "-"], in: "a", input: #"{"views": 1}"#)
      #expect(try FolioRunner.shell("git remote add origin \(remotePath)", in: scratch.path + "/a") == 0)
      try folio(["sync"], in: "a")
    }

    func remove() { scratch.remove() }

    /// Lists the server's host key for its port in `~/.ssh/known_hosts`.
    func trustHost() throws {
      try write(".ssh/known_hosts", "[127.0.0.1]:\(port) \(keys.server.hostPublicKey)\n")
    }

    /// Writes `text` to `relative` under HOME.
    func write(_ relative: String, _ text: String) throws {
      try text.write(toFile: home + "/" + relative, atomically: true, encoding: .utf8)
    }

    /// Copies a key pair into HOME.
    func install(key: String, as relative: String) throws {
      for suffix in ["", ".pub"] {
        try FileManager.default.copyItem(atPath: key + suffix, toPath: home + "/" + relative + suffix)
      }
      chmod(home + "/" + relative, 0o600)
    }

    /// The environment of a folio process: only this case's ssh settings.
    var folioEnvironment: [String: String] {
      let clean = [
        "HOME": home, "SSH_AUTH_SOCK": "", "FOLIO_SSH_KEY": "", "FOLIO_SSH_PASSPHRASE": "",
        "GIT_SSH_COMMAND": "", "GIT_SSH": "",
      ]
      return clean.merging(environment) { $1 }
    }

    /// Runs folio in `replica` with this case's environment.
    @discardableResult
    func folio(
      _ arguments: [String], in replica: String, input: String? = nil, ssh: Bool = false,
      expectSuccess: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> FolioRunner.Result {
      let result = try FolioRunner.run(
        arguments, in: scratch.path + "/" + replica, input: input, environment: ssh ? folioEnvironment : [:])
      if expectSuccess {
        #expect(
          result.status == 0, "folio \(arguments.joined(separator: " ")): \(result.stderr)",
          sourceLocation: sourceLocation)
      }
      return result
    }

    /// Runs plain git in `replica`, over ssh the way a user's git would.
    func git(_ command: String, in replica: String) throws -> (status: Int32, output: String) {
      let config =
        FileManager.default.fileExists(atPath: home + "/.ssh/config") ? home + "/.ssh/config" : "/dev/null"
      let ssh =
        "ssh -F \(config) -o UserKnownHostsFile=\(home)/.ssh/known_hosts -o StrictHostKeyChecking=yes \(sshOptions)"
      var variables = folioEnvironment.merging(["GIT_SSH_COMMAND": ssh]) { $1 }
      for key in ["GIT_AUTHOR", "GIT_COMMITTER"] {
        variables[key + "_NAME"] = "t"
        variables[key + "_EMAIL"] = "t@t"
      }
      let assignments = variables.map { "\($0.key)='\($0.value)'" }.sorted().joined(separator: " ")
      return try FolioRunner.shellOutput(
        "env \(assignments) git \(command)", in: scratch.path + "/" + replica)
    }

    /// The counter in `replica`'s copy of the document.
    func views(_ replica: String) -> Int? {
      let text = scratch.read(replica + "/todos/t.json") ?? ""
      guard let line = text.split(separator: "\n").first(where: { $0.contains("\"views\"") }) else {
        return nil
      }
      return Int(
        line.split(separator: ":").last?.trimmingCharacters(in: CharacterSet(charactersIn: " ,")) ?? "")
    }

    func increment(_ by: Int) -> [String] {
      [
        "apply", "todos", "t", "--op", "update", "--transforms",
        #"{"views": {"op": "increment", "by": \#(by)}}"#,
      ]
    }

    /// Clone over ssh, then sync (fetch, merge, push) and a plain
    /// `git pull` through the driver, checking the counter each time.
    func roundTrip(_ url: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
      let cloned = try folio(["clone", url, "b"], in: ".", ssh: true, sourceLocation: sourceLocation)
      guard cloned.status == 0 else { return }
      #expect(views("b") == 1, sourceLocation: sourceLocation)

      // Both sides count: a over file://, b over ssh; b's sync merges.
      try folio(increment(10), in: "a")
      try folio(["sync"], in: "a")
      try folio(increment(100), in: "b")
      let synced = try folio(["sync"], in: "b", ssh: true, sourceLocation: sourceLocation)
      #expect(synced.stdout.contains("merged"), "\(synced.stdout)", sourceLocation: sourceLocation)
      #expect(synced.stdout.contains("pushed to origin"), "\(synced.stdout)", sourceLocation: sourceLocation)
      try folio(["sync"], in: "a")
      #expect(views("a") == 111, sourceLocation: sourceLocation)

      // Plain git pull over ssh: git runs folio's merge driver.
      try folio(increment(1000), in: "a")
      try folio(["sync"], in: "a")
      try folio(increment(10000), in: "b")
      try folio(["commit", "-m", "b"], in: "b")
      let pulled = try git("pull --no-rebase -q --no-edit", in: "b")
      #expect(pulled.status == 0, "\(pulled.output)", sourceLocation: sourceLocation)
      #expect(views("b") == 11111, sourceLocation: sourceLocation)
    }
  }

  @Test func agentHoldingTheKey() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    let socket = box.scratch.path + "/agent.sock"
    let agent = Process()
    agent.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-agent")
    agent.arguments = ["-D", "-a", socket]
    agent.standardOutput = FileHandle.nullDevice
    agent.standardError = FileHandle.nullDevice
    try agent.run()
    defer {
      // SIGKILL and a poll: Foundation's waitUntilExit can miss the exit.
      kill(agent.processIdentifier, SIGKILL)
      for _ in 0..<500 where agent.isRunning { usleep(10_000) }
    }
    try #require(
      eventually { FileManager.default.fileExists(atPath: socket) || !agent.isRunning }
        && FileManager.default.fileExists(atPath: socket), "ssh-agent never made its socket")
    #expect(
      try FolioRunner.shell("SSH_AUTH_SOCK=\(socket) ssh-add -q \(box.keys.agent) 2>/dev/null", in: "/") == 0)
    box.environment["SSH_AUTH_SOCK"] = socket
    try box.roundTrip(box.url)
  }

  @Test func noAgentWithFolioSSHKey() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    box.sshOptions = "-i \(box.keys.plain)"
    try box.roundTrip(box.url)
  }

  @Test func noAgentWithADefaultIdentity() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    try box.install(key: box.keys.identity, as: ".ssh/id_ed25519")
    box.sshOptions = "-i \(box.home)/.ssh/id_ed25519"
    try box.roundTrip(box.url)
  }

  @Test func hostAliasInSSHConfig() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    try box.install(key: box.keys.alias, as: ".ssh/work_key")
    // ssh's first-obtained-value-wins: the alias block comes first, so the
    // catch-all's Port and User never apply to it.
    try box.write(
      ".ssh/config",
      """
      # A teammate's config
      Host folio-work !folio-other
        HostName 127.0.0.1
        Port \(box.port)
        User root
        IdentityFile %d/.ssh/work_key
        IdentitiesOnly yes

      Host *
        Port 1
        User nobody
      """)
    // Plain ssh expands %d from the password database, not HOME.
    box.sshOptions = "-i \(box.home)/.ssh/work_key"
    try box.roundTrip("ssh://folio-work" + box.remotePath)
  }

  @Test func scpLikeURL() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    // An scp-like URL has no port: the config gives it, for a pattern.
    try box.write(".ssh/config", "Host 127.0.0.?\n  Port \(box.port)\n")
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    box.sshOptions = "-i \(box.keys.plain)"
    let url = "root@127.0.0.1:" + box.remotePath
    try box.roundTrip(url)
    // The stored URL is the user's, not the one libgit2 was given.
    let stored = try FolioRunner.shellOutput("git remote get-url origin", in: box.scratch.path + "/b")
    #expect(stored.output.trimmingCharacters(in: .whitespacesAndNewlines) == url)
    // And an scp-like remote added with `git remote add` syncs too.
    #expect(try FolioRunner.shell("git remote add upstream-ssh '\(url)'", in: box.scratch.path + "/a") == 0)
    try box.folio(["sync", "upstream-ssh"], in: "a", ssh: true)
  }

  @Test func encryptedKeyWithAndWithoutPassphrase() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    box.environment["FOLIO_SSH_KEY"] = box.keys.encrypted

    // Without the passphrase the key is skipped, and the error says why.
    let refused = try box.folio(["clone", box.url, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("CREDENTIALS"), "\(refused.stderr)")
    #expect(refused.stderr.contains("encrypted, and FOLIO_SSH_PASSPHRASE is not set"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: box.scratch.path + "/b/folio.yaml"))

    // A wrong passphrase: a clear error, and the passphrase never printed.
    box.environment["FOLIO_SSH_PASSPHRASE"] = "not the passphrase"
    let wrong = try box.folio(["clone", box.url, "w"], in: ".", ssh: true, expectSuccess: false)
    #expect(wrong.status == 1)
    #expect(wrong.stderr.contains("CREDENTIALS") && wrong.stderr.contains("encrypted_key"), "\(wrong.stderr)")
    #expect(!wrong.stderr.contains("not the passphrase"))

    // With it: clone, sync and pull. Plain ssh reads it through SSH_ASKPASS.
    box.environment["FOLIO_SSH_PASSPHRASE"] = Keys.passphrase
    try box.scratch.write("askpass", "#!/bin/sh\necho '\(Keys.passphrase)'\n")
    chmod(box.scratch.path + "/askpass", 0o755)
    box.environment["SSH_ASKPASS"] = box.scratch.path + "/askpass"
    box.environment["SSH_ASKPASS_REQUIRE"] = "force"
    box.sshOptions = "-i \(box.keys.encrypted)"
    try? FileManager.default.removeItem(atPath: box.scratch.path + "/b")
    try box.roundTrip(box.url)
    let synced = try box.folio(["sync"], in: "b", ssh: true)
    #expect(!synced.stdout.contains(Keys.passphrase) && !synced.stderr.contains(Keys.passphrase))
  }

  @Test func wrongKeyListsWhatWasTried() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    box.environment["FOLIO_SSH_KEY"] = box.keys.wrong
    let cloned = try box.folio(["clone", box.url, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(cloned.status == 1)
    for expected in [
      "CREDENTIALS", "as 'root'", "SSH_AUTH_SOCK is not set",
      "wrong_key (FOLIO_SSH_KEY): refused by the server",
    ] {
      #expect(cloned.stderr.contains(expected), "\(expected) in \(cloned.stderr)")
    }
    let secret =
      try String(contentsOfFile: box.keys.wrong, encoding: .utf8)
      .split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
    #expect(!cloned.stderr.contains(secret))

    #expect(try FolioRunner.shell("git remote add ssh '\(box.url)'", in: box.scratch.path + "/a") == 0)
    let synced = try box.folio(["sync", "ssh"], in: "a", ssh: true, expectSuccess: false)
    #expect(synced.status == 1 && synced.stderr.contains("refused by the server"), "\(synced.stderr)")
    box.sshOptions = "-i \(box.keys.wrong) -o BatchMode=yes"
    #expect(try box.git("pull --no-rebase -q ssh main", in: "a").status != 0)
  }

  /// The fingerprint as `ssh-keygen -l` prints it.
  func fingerprint(_ keys: Keys) throws -> String {
    let listed = try FolioRunner.shellOutput(
      "ssh-keygen -l -f \(keys.server.directory)/host_ed25519.pub", in: "/")
    return String(listed.output.split(separator: " ")[1])
  }

  @Test func unknownHostIsRefusedWithItsFingerprint() throws {
    var box = try Case()
    defer { box.remove() }
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    box.sshOptions = "-i \(box.keys.plain) -o BatchMode=yes"
    let cloned = try box.folio(["clone", box.url, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(cloned.status == 1)
    let scan = "ssh-keyscan -p \(box.port) 127.0.0.1 >> ~/.ssh/known_hosts"
    for expected in ["HOST_KEY", "'127.0.0.1'", "ED25519", try fingerprint(box.keys), scan] {
      #expect(cloned.stderr.contains(expected), "\(expected) in \(cloned.stderr)")
    }
    #expect(
      !FileManager.default.fileExists(atPath: box.home + "/.ssh/known_hosts"), "never accepted on its own")

    #expect(try FolioRunner.shell("git remote add ssh '\(box.url)'", in: box.scratch.path + "/a") == 0)
    let synced = try box.folio(["sync", "ssh"], in: "a", ssh: true, expectSuccess: false)
    #expect(synced.status == 1 && synced.stderr.contains("HOST_KEY"), "\(synced.stderr)")
    #expect(try box.git("pull --no-rebase -q ssh main", in: "a").status != 0)

    // The suggested command (with this HOME) fixes it.
    #expect(try FolioRunner.shell("HOME=\(box.home) sh -c '\(scan) 2>/dev/null'", in: "/") == 0)
    try box.folio(["clone", box.url, "b"], in: ".", ssh: true)
  }

  @Test func changedHostKeyIsRefused() throws {
    var box = try Case()
    defer { box.remove() }
    // known_hosts lists another ed25519 key for the host, hashed as
    // Debian's ssh writes it.
    try SSHServer.keygen(box.scratch.path + "/impostor")
    let impostor = try String(contentsOfFile: box.scratch.path + "/impostor.pub", encoding: .utf8)
      .split(separator: " ").prefix(2).joined(separator: " ")
    try box.write(".ssh/known_hosts", "[127.0.0.1]:\(box.port) \(impostor)\n")
    #expect(
      try FolioRunner.shell("ssh-keygen -q -H -f \(box.home)/.ssh/known_hosts >/dev/null 2>&1", in: "/") == 0)
    #expect(try String(contentsOfFile: box.home + "/.ssh/known_hosts", encoding: .utf8).hasPrefix("|1|"))
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    box.sshOptions = "-i \(box.keys.plain) -o BatchMode=yes"

    let cloned = try box.folio(["clone", box.url, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(cloned.status == 1)
    for expected in ["HOST_KEY", "CHANGED", "ED25519", try fingerprint(box.keys), "known_hosts:1"] {
      #expect(cloned.stderr.contains(expected), "\(expected) in \(cloned.stderr)")
    }
    #expect(try FolioRunner.shell("git remote add ssh '\(box.url)'", in: box.scratch.path + "/a") == 0)
    let synced = try box.folio(["sync", "ssh"], in: "a", ssh: true, expectSuccess: false)
    #expect(synced.status == 1 && synced.stderr.contains("CHANGED"), "\(synced.stderr)")
    #expect(try box.git("pull --no-rebase -q ssh main", in: "a").status != 0)
  }

  @Test func proxyCommandGivesAClearError() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    try box.write(".ssh/config", "Host folio-jump\n  HostName 127.0.0.1\n  ProxyCommand nc %h %p\n")
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    let cloned = try box.folio(
      ["clone", "ssh://folio-jump" + box.remotePath, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(cloned.status == 1)
    #expect(cloned.stderr.contains("REMOTE"), "\(cloned.stderr)")
    #expect(cloned.stderr.contains(".ssh/config:3: 'ProxyCommand'"), "\(cloned.stderr)")
  }
}
