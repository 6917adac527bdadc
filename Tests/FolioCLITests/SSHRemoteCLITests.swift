import FolioTestSupport
import Foundation
import Testing

/// ssh remotes against real OpenSSH servers that the suite starts on
/// 127.0.0.1, reached the way `git push` reaches them: Folio runs the
/// system git, which runs ssh with the user's config. Every folio and git
/// process gets a temporary `HOME` whose `.gitconfig` sets
/// `core.sshCommand` to `ssh -F HOME/.ssh/config` (ssh takes `~` from the
/// password database, not `HOME`), so the user's own `~/.ssh` is never
/// read or written.
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
      jump = try SSHServer(directory: directory + "/jump", authorizedKeys: trusted)
    }

    /// A second server, used only as a `ProxyJump` host.
    let jump: SSHServer
  }

  /// Started by the first test that needs it; stopped when the test
  /// process exits (see ``SSHServer``).
  static let keys = Result { try Keys() }

  /// One case's scratch space: a bare repository seeded from replica `a`
  /// over `file://`, a temporary `HOME`, and the environment every process
  /// gets.
  struct Case {
    let keys: Keys
    let scratch: CLIScratch
    var home: String { scratch.path + "/home" }
    var port: Int { keys.server.port }
    var remotePath: String { scratch.path + "/remote.git" }
    var url: String { "ssh://root@127.0.0.1:\(port)\(remotePath)" }
    var sshConfig: String { home + "/.ssh/config" }
    /// Extra environment for folio, on top of a clean ssh setting.
    var environment: [String: String] = [:]
    /// What plain git's ssh gets besides the config file (plain git does
    /// not know Folio's variables).
    var sshOptions = ""

    init() throws {
      keys = try SSHRemoteCLITests.keys.get()
      scratch = try CLIScratch(yaml: nil)
      try FileManager.default.createDirectory(
        atPath: scratch.path + "/home/.ssh", withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
      try write(".gitconfig", "[core]\n\tsshCommand = ssh -F \(sshConfig)\n")
      try configure("")
      #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
      try scratch.write("a/folio.yaml", GitPullTests.yaml)
      try folio(["init"], in: "a")
      try folio(["put", "todos", "t", "-"], in: "a", input: #"{"views": 1}"#)
      #expect(try FolioRunner.shell("git remote add origin \(remotePath)", in: scratch.path + "/a") == 0)
      try folio(["sync"], in: "a")
    }

    func remove() { scratch.remove() }

    /// Writes `~/.ssh/config`: `hosts` (its `Host` blocks come first, as
    /// ssh takes the first value it finds), then what every host gets
    /// here: this HOME's `known_hosts` and no host key prompt.
    func configure(_ hosts: String) throws {
      try write(
        ".ssh/config",
        hosts + """

          Host *
            UserKnownHostsFile \(home)/.ssh/known_hosts
            GlobalKnownHostsFile /dev/null

          """)
    }

    /// Lists the servers' host keys in `~/.ssh/known_hosts`.
    func trustHost() throws {
      try write(
        ".ssh/known_hosts",
        "[127.0.0.1]:\(port) \(keys.server.hostPublicKey)\n[127.0.0.1]:\(keys.jump.port) \(keys.jump.hostPublicKey)\n"
      )
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
        "GIT_SSH_COMMAND": "", "GIT_SSH": "", "GIT_CONFIG_NOSYSTEM": "1", "SSH_ASKPASS": "",
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
      var variables = folioEnvironment.merging(["GIT_SSH_COMMAND": "ssh -F \(sshConfig) \(sshOptions)"]) {
        $1
      }
      for key in ["GIT_AUTHOR", "GIT_COMMITTER"] {
        variables[key + "_NAME"] = "t"
        variables[key + "_EMAIL"] = "t@t"
      }
      let assignments = variables.map { "\($0.key)='\($0.value)'" }.sorted().joined(separator: " ")
      return try FolioRunner.shellOutput(
        "env \(assignments) git \(command)", in: scratch.path + "/" + replica)
    }

    /// Starts an ssh-agent with no keys; stop it with ``stop(_:)``.
    func startAgent() throws -> (socket: String, process: Process) {
      let socket = scratch.path + "/agent.sock"
      let agent = Process()
      agent.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-agent")
      agent.arguments = ["-D", "-a", socket]
      agent.standardOutput = FileHandle.nullDevice
      agent.standardError = FileHandle.nullDevice
      try agent.run()
      guard eventually({ FileManager.default.fileExists(atPath: socket) || !agent.isRunning }),
        FileManager.default.fileExists(atPath: socket)
      else {
        Case.stop(agent)
        throw CocoaError(.fileNoSuchFile, userInfo: ["ssh-agent": "never made its socket"])
      }
      return (socket, agent)
    }

    /// SIGKILL and a poll: Foundation's waitUntilExit can miss the exit.
    static func stop(_ agent: Process) {
      kill(agent.processIdentifier, SIGKILL)
      eventually(timeout: 5) { !agent.isRunning }
    }

    func views(_ replica: String) -> Int? { scratch.views(in: replica) }
    func increment(_ by: Int) -> [String] { CLIScratch.increment(by) }

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
    let (socket, agent) = try box.startAgent()
    defer { Case.stop(agent) }
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

  /// A partial replica over ssh (issue 56): the clone leaves the other
  /// table's blobs on the server, and syncs go both ways.
  @Test func partialCloneOverSSH() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    try box.folio(["tables", "add", "notes"], in: "a")
    for pk in ["n1", "n2", "n3"] {
      try box.folio(["put", "notes", pk, "-"], in: "a", input: #"{"text": "\#(pk)"}"#)
    }
    try box.folio(["sync"], in: "a")
    #expect(
      try FolioRunner.shell("git -C remote.git config uploadpack.allowFilter true", in: box.scratch.path) == 0
    )
    // This sshd passes no GIT_PROTOCOL, so git speaks protocol v0, where
    // the server must also let a client ask for a blob by id.
    let refused = try box.folio(
      ["clone", box.url, "b", "--tables", "todos"], in: ".", ssh: true, expectSuccess: false)
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("uploadpack.allowReachableSHA1InWant=true"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: box.scratch.path + "/b"))
    #expect(
      try FolioRunner.shell(
        "git -C remote.git config uploadpack.allowReachableSHA1InWant true", in: box.scratch.path) == 0)
    try box.folio(["clone", box.url, "b", "--tables", "todos"], in: ".", ssh: true)
    #expect(box.views("b") == 1)
    let notes = try FolioRunner.shellOutput("git -C a ls-tree -r HEAD data/notes", in: box.scratch.path)
      .output
      .split(separator: "\n").map { String($0.split(separator: " ")[2].prefix(40)) }
    let stored = try FolioRunner.shellOutput(
      "git -C b cat-file --batch-all-objects --batch-check", in: box.scratch.path
    ).output
    #expect(notes.count == 3 && notes.allSatisfy { !stored.contains($0) }, "\(notes) in \(stored)")
    try box.folio(box.increment(2), in: "b", ssh: true)
    try box.folio(["put", "notes", "n4", "-"], in: "a", input: #"{"text": "n4"}"#)
    try box.folio(["sync"], in: "a")
    try box.folio(["sync"], in: "b", ssh: true)
    try box.folio(["sync"], in: "a")
    #expect(box.views("a") == 3 && box.views("b") == 3)
    let query = try box.folio(["query", "notes"], in: "b", ssh: true, expectSuccess: false)
    #expect(query.stderr.contains("TABLE_ABSENT"), "\(query.stderr)")
  }

  @Test func identityFileInSSHConfig() throws {
    let box = try Case()
    defer { box.remove() }
    try box.trustHost()
    try box.install(key: box.keys.identity, as: ".ssh/id_ed25519")
    try box.configure("Host 127.0.0.1\n  IdentityFile \(box.home)/.ssh/id_ed25519\n")
    try box.roundTrip(box.url)
  }

  @Test func hostAliasInSSHConfig() throws {
    let box = try Case()
    defer { box.remove() }
    try box.trustHost()
    try box.install(key: box.keys.alias, as: ".ssh/work_key")
    // ssh's first-obtained-value-wins: the alias block comes first, so the
    // catch-all's Port and User never apply to it.
    try box.configure(
      """
      # A teammate's config
      Host folio-work !folio-other
        HostName 127.0.0.1
        Port \(box.port)
        User root
        IdentityFile \(box.home)/.ssh/work_key
        IdentitiesOnly yes
        HostKeyAlias [127.0.0.1]:\(box.port)

      Host folio-*
        Port 1
        User nobody

      """)
    try box.roundTrip("ssh://folio-work" + box.remotePath)
  }

  /// `ProxyJump` through a second sshd: ssh runs the jump, which libssh2
  /// could not.
  @Test func proxyJumpThroughASecondServer() throws {
    let box = try Case()
    defer { box.remove() }
    try box.trustHost()
    try box.configure(
      """
      Host folio-behind
        HostName 127.0.0.1
        Port \(box.port)
        User root
        HostKeyAlias [127.0.0.1]:\(box.port)
        ProxyJump root@127.0.0.1:\(box.keys.jump.port)
        IdentityFile \(box.keys.plain)

      Host 127.0.0.1
        IdentityFile \(box.keys.plain)

      """)
    let connectionsBefore = box.keys.jump.log.components(separatedBy: "Accepted publickey").count
    try box.roundTrip("ssh://folio-behind" + box.remotePath)
    #expect(
      box.keys.jump.log.components(separatedBy: "Accepted publickey").count > connectionsBefore,
      "no connection went through the jump host")
  }

  /// `core.sshCommand` is git's own setting: Folio's runs use it.
  @Test func coreSSHCommandIsRun() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    let log = box.scratch.path + "/ssh-runs"
    try box.scratch.write(
      "logging-ssh",
      "#!/bin/sh\necho run >> '\(log)'\nexec ssh -F '\(box.sshConfig)' -i '\(box.keys.plain)' \"$@\"\n")
    chmod(box.scratch.path + "/logging-ssh", 0o755)
    try box.write(".gitconfig", "[core]\n\tsshCommand = \(box.scratch.path)/logging-ssh\n")
    box.sshOptions = "-i \(box.keys.plain)"
    try box.roundTrip(box.url)
    let runs = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").count ?? 0
    #expect(runs >= 3, "folio clone and sync ran core.sshCommand \(runs) times")
  }

  @Test func scpLikeURL() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    // An scp-like URL has no port: the config gives it, for a pattern.
    try box.configure("Host 127.0.0.?\n  Port \(box.port)\n")
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    box.sshOptions = "-i \(box.keys.plain)"
    let url = "root@127.0.0.1:" + box.remotePath
    try box.roundTrip(url)
    // The stored URL is the user's.
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

    // No terminal and no passphrase: refused at once, with how to fix it.
    let refused = try box.folio(["clone", box.url, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("CREDENTIALS"), "\(refused.stderr)")
    #expect(refused.stderr.contains("FOLIO_SSH_PASSPHRASE"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: box.scratch.path + "/b/folio.yaml"))

    // A wrong passphrase: a clear error, and the passphrase never printed.
    box.environment["FOLIO_SSH_PASSPHRASE"] = "not the passphrase"
    let wrong = try box.folio(["clone", box.url, "w"], in: ".", ssh: true, expectSuccess: false)
    #expect(wrong.status == 1)
    #expect(wrong.stderr.contains("CREDENTIALS"), "\(wrong.stderr)")
    #expect(!wrong.stderr.contains("not the passphrase"))

    // With it: clone, sync and pull. Plain ssh reads it through SSH_ASKPASS.
    box.environment["FOLIO_SSH_PASSPHRASE"] = Keys.passphrase
    try box.scratch.write("askpass", "#!/bin/sh\necho '\(Keys.passphrase)'\n")
    chmod(box.scratch.path + "/askpass", 0o755)
    box.sshOptions = "-i \(box.keys.encrypted) -o SetEnv=X=1"
    try? FileManager.default.removeItem(atPath: box.scratch.path + "/b")
    var withAskpass = box
    withAskpass.environment["SSH_ASKPASS"] = box.scratch.path + "/askpass"
    withAskpass.environment["SSH_ASKPASS_REQUIRE"] = "force"
    try withAskpass.roundTrip(box.url)
    let synced = try box.folio(["sync"], in: "b", ssh: true)
    #expect(!synced.stdout.contains(Keys.passphrase) && !synced.stderr.contains(Keys.passphrase))
  }

  /// An encrypted key unlocked once into the agent serves every run.
  @Test func passphraseKeyThroughTheAgent() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    let (socket, agent) = try box.startAgent()
    defer { Case.stop(agent) }
    try box.scratch.write("askpass", "#!/bin/sh\necho '\(Keys.passphrase)'\n")
    chmod(box.scratch.path + "/askpass", 0o755)
    let add =
      "SSH_AUTH_SOCK=\(socket) SSH_ASKPASS=\(box.scratch.path)/askpass SSH_ASKPASS_REQUIRE=force "
      + "ssh-add -q \(box.keys.encrypted) </dev/null 2>/dev/null"
    #expect(try FolioRunner.shell(add, in: "/") == 0)
    box.environment["SSH_AUTH_SOCK"] = socket
    try box.roundTrip(box.url)
  }

  @Test func wrongKeyIsACredentialsError() throws {
    var box = try Case()
    defer { box.remove() }
    try box.trustHost()
    box.environment["FOLIO_SSH_KEY"] = box.keys.wrong
    let cloned = try box.folio(["clone", box.url, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(cloned.status == 1)
    for expected in ["CREDENTIALS", "Permission denied (publickey", "ssh-agent", "FOLIO_SSH_KEY"] {
      #expect(cloned.stderr.contains(expected), "\(expected) in \(cloned.stderr)")
    }
    let secret =
      try String(contentsOfFile: box.keys.wrong, encoding: .utf8)
      .split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
    #expect(!cloned.stderr.contains(secret))

    #expect(try FolioRunner.shell("git remote add ssh '\(box.url)'", in: box.scratch.path + "/a") == 0)
    let synced = try box.folio(["sync", "ssh"], in: "a", ssh: true, expectSuccess: false)
    #expect(synced.status == 1 && synced.stderr.contains("CREDENTIALS"), "\(synced.stderr)")
    box.sshOptions = "-i \(box.keys.wrong) -o BatchMode=yes"
    #expect(try box.git("pull --no-rebase -q ssh main", in: "a").status != 0)
  }

  /// The fingerprint as `ssh-keygen -l` prints it.
  func fingerprint(_ keys: Keys) throws -> String {
    let listed = try FolioRunner.shellOutput(
      "ssh-keygen -l -f \(keys.server.directory)/host_ed25519.pub", in: "/")
    return String(listed.output.split(separator: " ")[1])
  }

  /// ssh's own check refuses an unknown host; Folio never adds its key.
  @Test func unknownHostIsRefused() throws {
    var box = try Case()
    defer { box.remove() }
    box.environment["FOLIO_SSH_KEY"] = box.keys.plain
    box.sshOptions = "-i \(box.keys.plain) -o BatchMode=yes"
    let cloned = try box.folio(["clone", box.url, "b"], in: ".", ssh: true, expectSuccess: false)
    #expect(cloned.status == 1)
    for expected in ["HOST_KEY", "Host key verification failed", "ssh-keyscan"] {
      #expect(cloned.stderr.contains(expected), "\(expected) in \(cloned.stderr)")
    }
    #expect(
      !FileManager.default.fileExists(atPath: box.home + "/.ssh/known_hosts"), "never accepted on its own")

    #expect(try FolioRunner.shell("git remote add ssh '\(box.url)'", in: box.scratch.path + "/a") == 0)
    let synced = try box.folio(["sync", "ssh"], in: "a", ssh: true, expectSuccess: false)
    #expect(synced.status == 1 && synced.stderr.contains("HOST_KEY"), "\(synced.stderr)")
    #expect(try box.git("pull --no-rebase -q ssh main", in: "a").status != 0)

    // Listing the key, as the message says, fixes it.
    let scan = "ssh-keyscan -p \(box.port) 127.0.0.1 > \(box.home)/.ssh/known_hosts 2>/dev/null"
    #expect(try FolioRunner.shell(scan, in: "/") == 0)
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
    for expected in ["HOST_KEY", "CHANGED", try fingerprint(box.keys), "known_hosts:1"] {
      #expect(cloned.stderr.contains(expected), "\(expected) in \(cloned.stderr)")
    }
    #expect(try FolioRunner.shell("git remote add ssh '\(box.url)'", in: box.scratch.path + "/a") == 0)
    let synced = try box.folio(["sync", "ssh"], in: "a", ssh: true, expectSuccess: false)
    #expect(synced.status == 1 && synced.stderr.contains("CHANGED"), "\(synced.stderr)")
    #expect(try box.git("pull --no-rebase -q ssh main", in: "a").status != 0)
  }
}
