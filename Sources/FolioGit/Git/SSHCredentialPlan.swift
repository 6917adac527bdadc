import FolioSystem
import Foundation
import Glibc

/// The ssh credentials one connection offers, in the order ssh uses, each
/// once:
/// 1. the agent, only when `SSH_AUTH_SOCK` is set, the agent answers and
///    holds a key, and the config does not say `IdentitiesOnly yes`;
/// 2. the key named by `FOLIO_SSH_KEY` or `ssh-key` under `sync:`, then a
///    `-i` in `GIT_SSH_COMMAND`;
/// 3. the `IdentityFile`s `~/.ssh/config` gives for the host;
/// 4. ssh's default identities (`~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`).
///
/// Unlike ssh, step 4 still runs after a named key was refused: a key named
/// for one remote in `folio.yaml` must not hide the default key another
/// remote needs.
///
/// The agent is probed first because libgit2 1.5 fails the whole
/// connection, instead of asking for the next credential, when it cannot
/// reach an agent. For the same reason an encrypted key is offered only with
/// `FOLIO_SSH_PASSPHRASE`: libssh2 treats a key it cannot decrypt as a hard
/// error. Every step leaves a note, so a final failure can say what was
/// tried. Notes name files and sources, never a secret.
final class SSHCredentialPlan {
  /// One thing to offer.
  enum Candidate {
    /// The agent's keys (libgit2 offers each in turn).
    case agent
    /// A private key file, its public key if one lies beside it, and the
    /// passphrase to decrypt it.
    case key(path: String, publicKey: String?, passphrase: String?)
  }

  private var pending: [(Candidate, String)] = []
  /// The note for the candidate offered last, marked refused when the next
  /// one is asked for.
  private var offered: String?
  /// What was tried or skipped, and why, in order.
  private(set) var notes: [String] = []

  /// The key offered last, if the last offer was a key file.
  private(set) var lastKey: String?

  init(endpoint: SSHEndpoint, environment: [String: String]) {
    let home = SSHEndpoint.home(environment)
    if endpoint.identitiesOnly {
      notes.append("the ssh agent (skipped: IdentitiesOnly yes)")
    } else if let socket = environment["SSH_AUTH_SOCK"], !socket.isEmpty {
      switch Self.agentKeys(socket) {
      case nil: notes.append("the ssh agent at SSH_AUTH_SOCK (it does not answer)")
      case 0?: notes.append("the ssh agent (it holds no keys)")
      case let count?: pending.append((.agent, "the ssh agent (\(count) key\(count == 1 ? "" : "s"))"))
      }
    } else {
      notes.append("the ssh agent (SSH_AUTH_SOCK is not set)")
    }
    var seen: Set<String> = []
    let passphrase = environment["FOLIO_SSH_PASSPHRASE"].flatMap { $0.isEmpty ? nil : $0 }
    let named = endpoint.identityFiles.map { ($0.path, $0.source, true) }
    let defaults = SSHEndpoint.defaultIdentities(home: home).map { ($0, "default identity", false) }
    for (path, source, isNamed) in named + defaults {
      let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
      guard seen.insert(absolute).inserted else { continue }
      let label = "\(Self.tilde(path, home: home)) (\(source))"
      guard FileSystem.isRegularFile(path) else {
        if isNamed { notes.append("\(label): no such file") }
        continue
      }
      switch Self.isEncrypted(path) {
      case nil:
        notes.append("\(label): cannot be read")
      case true? where passphrase == nil:
        notes.append("\(label): encrypted, and FOLIO_SSH_PASSPHRASE is not set")
      default:
        let publicKey = FileSystem.isRegularFile(path + ".pub") ? path + ".pub" : nil
        pending.append((.key(path: path, publicKey: publicKey, passphrase: passphrase), label))
      }
    }
  }

  /// The next credential to offer, or nil when all were offered. Asking
  /// again means the server refused the previous one.
  func next() -> Candidate? {
    if let offered { notes.append("\(offered): refused by the server") }
    offered = nil
    lastKey = nil
    guard !pending.isEmpty else { return nil }
    let (candidate, note) = pending.removeFirst()
    offered = note
    if case .key(let path, _, _) = candidate { lastKey = path }
    return candidate
  }

  /// The note for the candidate in use when the connection failed.
  var current: String? { offered }

  /// What was tried, for an error message: `a; b; c`.
  var summary: String {
    (notes + (offered.map { [$0] } ?? [])).joined(separator: "; ")
  }

  private static func tilde(_ path: String, home: String) -> String {
    path.hasPrefix(home + "/") ? "~" + path.dropFirst(home.count) : path
  }

  /// Whether the private key in `path` is encrypted, or nil if it cannot be
  /// read. Knows OpenSSH's own format and the PEM ones.
  static func isEncrypted(_ path: String) -> Bool? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    let text = String(decoding: data, as: UTF8.self)
    if text.contains("BEGIN ENCRYPTED PRIVATE KEY") || text.contains("Proc-Type: 4,ENCRYPTED") { return true }
    guard text.contains("BEGIN OPENSSH PRIVATE KEY") else { return false }
    // "openssh-key-v1\0", then the cipher name as an ssh string
    // (PROTOCOL.key in OpenSSH's sources).
    let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
    guard let blob = Data(base64Encoded: body).map([UInt8].init) else { return nil }
    let magic = Array("openssh-key-v1\0".utf8)
    guard blob.count > magic.count + 4, Array(blob[0..<magic.count]) == magic else { return nil }
    let cipher = SSHKnownHosts.keyType(Array(blob[magic.count...]))
    return cipher != "none"
  }

  /// How many keys the agent at `socket` holds, or nil if it does not
  /// answer within two seconds (SSH_AGENTC_REQUEST_IDENTITIES, from the
  /// agent protocol draft, draft-miller-ssh-agent).
  static func agentKeys(_ socket: String) -> Int? {
    let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(socket.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else { return nil }
    let request: [UInt8] = [0, 0, 0, 1, 11]
    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, 5, Int32(MSG_NOSIGNAL)) }) == 5 else {
      return nil
    }
    var answer = [UInt8](repeating: 0, count: 9)
    var received = 0
    while received < 9 {
      let result = answer.withUnsafeMutableBytes { buffer in
        FileSystem.retrying { recv(fd, buffer.baseAddress! + received, 9 - received, 0) }
      }
      guard case .success(let count) = result, count > 0 else { return nil }
      received += count
    }
    // SSH_AGENT_IDENTITIES_ANSWER (12), then the key count.
    guard answer[4] == 12 else { return nil }
    return answer[5..<9].reduce(0) { $0 << 8 | Int($1) }
  }
}
