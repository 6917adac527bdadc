import Folio
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioGit

/// `~/.ssh/config`, ssh URLs and known_hosts, read as OpenSSH reads them.
/// The end-to-end cases against a real sshd are in
/// `SSHRemoteCLITests`.
struct SSHConfigTests {
  @Test(arguments: [
    ("*", "anything", true), ("git*", "github-work", true), ("g?t", "git", true), ("g?t", "gt", false),
    ("*.example.com", "a.example.com", true), ("*.example.com", "example.com", false),
    ("GitHub.com", "github.com", true), ("a*b*c", "axxbyyc", true), ("a*b*c", "axxbyy", false),
  ])
  func wildcards(pattern: String, host: String, matches: Bool) {
    #expect(SSHConfig.wildcard(pattern, host) == matches)
  }

  @Test func negationWinsAndCommasSplit() {
    #expect(SSHConfig.matches("work", patterns: ["*", "!other"]))
    #expect(!SSHConfig.matches("other", patterns: ["*", "!other"]))
    #expect(!SSHConfig.matches("other", patterns: ["!other"]))
    #expect(SSHConfig.matches("b", patterns: ["a,b"]))
  }

  @Test func firstObtainedValueWinsAndIdentityFilesAddUp() throws {
    let text = """
      # comment
      Host work
        HostName=real.example.com
        Port 2222
        IdentityFile ~/.ssh/work
      Match exec "true"
        User matched
      Host *
        User git
        Port 22
        IdentityFile "~/.ssh/all keys"
        IdentitiesOnly yes
      """
    let config = try SSHConfig(parsing: text, file: "config", sshDirectory: "/h/.ssh")
    let work = config.options(forHost: "work")
    #expect(work.hostName == "real.example.com")
    #expect(work.port?.number == 2222)
    #expect(work.user == "git", "a Match block never applies")
    #expect(work.identityFiles.map(\.path) == ["~/.ssh/work", "~/.ssh/all keys"])
    #expect(work.identitiesOnly)
    let other = config.options(forHost: "other")
    #expect(other.hostName == nil && other.port?.number == 22)
  }

  @Test func includeReadsFilesInPlace() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write(".ssh/conf.d/a.conf", "Host inc\n  HostName included.example\n")
    try scratch.write(".ssh/config", "Include conf.d/*.conf\nHost *\n  HostName fallback\n")
    let config = try SSHConfig.load(home: scratch.path)
    #expect(config.options(forHost: "inc").hostName == "included.example")
    #expect(config.options(forHost: "x").hostName == "fallback")
  }

  @Test func proxyCommandIsReportedWithItsLine() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write(".ssh/config", "Host jump\n  ProxyJump bastion\nHost *\n  ProxyCommand none\n")
    let environment = ["HOME": scratch.path, "USER": "me"]
    #expect(throws: FolioError.self) {
      try SSHEndpoint(url: "ssh://jump/repo.git", namedKey: nil, environment: environment)
    }
    do {
      _ = try SSHEndpoint(url: "jump:repo.git", namedKey: nil, environment: environment)
    } catch let error as FolioError {
      #expect(error.code == .remote)
      #expect(error.message.contains("config:2: 'ProxyJump'"), "\(error.message)")
    }
    // `ProxyCommand none` switches it off, as in ssh.
    #expect(try SSHEndpoint(url: "ssh://other/repo.git", namedKey: nil, environment: environment) != nil)
  }

  @Test(arguments: [
    ("ssh://git@example.com/org/repo.git", "ssh://git@example.com:22/org/repo.git"),
    ("ssh://example.com:2222/srv/r", "ssh://me@example.com:2222/srv/r"),
    ("git+ssh://u@[::1]:22/x", "ssh://u@[::1]:22/x"),
    ("git@example.com:org/repo.git", "ssh://git@example.com:22/~/org/repo.git"),
    ("example.com:/abs/repo", "ssh://me@example.com:22/abs/repo"),
    ("host:~other/repo", "ssh://me@host:22/~other/repo"),
    ("[u@host:2200]:repo", "ssh://u@host:2200/~/repo"),
  ])
  func urlsAreSpelledOutForLibgit2(url: String, expected: String) throws {
    let environment = ["HOME": "/nonexistent", "USER": "me"]
    let endpoint = try #require(try SSHEndpoint(url: url, namedKey: nil, environment: environment))
    #expect(endpoint.libgit2URL == expected)
  }

  @Test(arguments: [
    "file:///srv/repo.git", "/srv/repo.git", "./a:b", "https://example.com/r.git", "git://h/r",
  ])
  func otherURLsAreNotSSH(url: String) {
    #expect(!SSHEndpoint.isSSH(url))
  }

  @Test func configAndGitSSHCommandResolveAnAlias() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write(
      ".ssh/config",
      "Host gh-work\n  HostName github.com\n  User git\n  Port 443\n  IdentityFile %d/.ssh/%r_%h\n")
    let environment = [
      "HOME": scratch.path, "USER": "me", "GIT_SSH_COMMAND": "ssh -i '~/my key' -o Port=2200",
    ]
    let endpoint = try #require(
      try SSHEndpoint(url: "gh-work:org/repo.git", namedKey: "/k", environment: environment))
    #expect(endpoint.host == "github.com" && endpoint.user == "git")
    #expect(endpoint.port == 2200, "-o on the command line comes before the config")
    #expect(
      endpoint.identityFiles.map(\.path) == [
        "/k", scratch.path + "/my key", scratch.path + "/.ssh/git_github.com",
      ])
    #expect(endpoint.libgit2URL == "ssh://git@github.com:2200/~/org/repo.git")
  }

  @Test func knownHostsTellsUnknownFromChanged() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let key: [UInt8] = [0, 0, 0, 11] + Array("ssh-ed25519".utf8) + [0, 0, 0, 4, 1, 2, 3, 4]
    let other: [UInt8] = [0, 0, 0, 11] + Array("ssh-ed25519".utf8) + [0, 0, 0, 4, 9, 9, 9, 9]
    let encoded = Data(key).base64EncodedString()
    let otherEncoded = Data(other).base64EncodedString()
    // A hashed entry for [h]:2222, as `ssh -o HashKnownHosts=yes` writes it.
    let salt: [UInt8] = Array(repeating: 7, count: 20)
    let hash = HMACSHA1.mac(key: salt, message: Array("[h]:2222".utf8))
    let hashed = "|1|\(Data(salt).base64EncodedString())|\(Data(hash).base64EncodedString())"
    try scratch.write(
      "known_hosts",
      """
      # comment
      plain.example,10.0.0.1 ssh-ed25519 \(encoded)
      \(hashed) ssh-ed25519 \(otherEncoded)
      @revoked bad.example ssh-ed25519 \(encoded)
      *.wild.example,!no.wild.example ssh-ed25519 \(encoded)
      """)
    let files = [scratch.path + "/known_hosts"]
    #expect(SSHKnownHosts.verdict(host: "plain.example", port: 22, key: key, files: files) == .known)
    #expect(SSHKnownHosts.verdict(host: "10.0.0.1", port: 22, key: key, files: files) == .known)
    #expect(SSHKnownHosts.verdict(host: "plain.example", port: 2222, key: key, files: files) == .unknown)
    #expect(SSHKnownHosts.verdict(host: "h", port: 2222, key: other, files: files) == .known)
    #expect(SSHKnownHosts.verdict(host: "h", port: 2222, key: key, files: files) == .changed(files[0] + ":3"))
    #expect(
      SSHKnownHosts.verdict(host: "bad.example", port: 22, key: key, files: files)
        == .revoked(files[0] + ":4"))
    #expect(SSHKnownHosts.verdict(host: "a.wild.example", port: 22, key: key, files: files) == .known)
    #expect(SSHKnownHosts.verdict(host: "no.wild.example", port: 22, key: key, files: files) == .unknown)
    #expect(SSHKnownHosts.keyType(key) == "ssh-ed25519")
  }

  @Test func hmacSHA1MatchesRFC2202() {
    // RFC 2202, test case 2.
    let mac = HMACSHA1.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
    #expect(mac.map { String(format: "%02x", $0) }.joined() == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
  }

  @Test func encryptedKeysAreRecognized() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    for (name, passphrase) in [("plain", ""), ("locked", "secret")] {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-keygen")
      process.arguments = ["-q", "-t", "ed25519", "-N", passphrase, "-f", scratch.path + "/" + name]
      try process.run()
      process.waitUntilExit()
    }
    #expect(SSHCredentialPlan.isEncrypted(scratch.path + "/plain") == false)
    #expect(SSHCredentialPlan.isEncrypted(scratch.path + "/locked") == true)
    #expect(SSHCredentialPlan.isEncrypted(scratch.path + "/missing") == nil)
  }
}
