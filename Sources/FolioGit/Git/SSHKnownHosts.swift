import FolioSystem
import Foundation

/// The user's `known_hosts` files, read to decide on a host key that
/// libgit2 did not find, and to say why it is refused.
///
/// libgit2 1.5 checks only `$HOME/.ssh/known_hosts` (through libssh2), and
/// tells its caller no more than "not valid". Folio reads the files the
/// user's ssh reads (``SSHEndpoint/knownHostsFiles``), in OpenSSH's format:
/// plain and `|1|salt|hash` host names, comma-separated patterns with `*`,
/// `?` and `!`, `[host]:port` for a port other than 22, and the
/// `@revoked` marker. `@cert-authority` lines are skipped: host
/// certificates are not checked.
///
/// Nothing is ever written: a new key is added by the user, after checking
/// its fingerprint.
enum SSHKnownHosts {
  /// What the files say about one host and key.
  enum Verdict: Equatable {
    /// A line lists this key for this host.
    case known
    /// No line names the host with a key of this type.
    case unknown
    /// A line names the host with another key of the same type (at this
    /// `file:line`).
    case changed(String)
    /// The key is marked `@revoked` (at this `file:line`).
    case revoked(String)
  }

  /// How the files judge `key` (the raw key blob) offered by `host` on `port`.
  static func verdict(host: String, port: Int, key: [UInt8], files: [String]) -> Verdict {
    let name = port == 22 ? host : "[\(host)]:\(port)"
    let type = keyType(key)
    var changed: String?
    for file in files {
      guard let data = FileManager.default.contents(atPath: file) else { continue }
      for (index, raw) in String(decoding: data, as: UTF8.self).split(
        separator: "\n", omittingEmptySubsequences: false
      ).enumerated() {
        var fields = raw.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = fields.first, !first.hasPrefix("#") else { continue }
        var marker: String?
        if first.hasPrefix("@") {
          marker = first
          fields.removeFirst()
        }
        guard fields.count >= 3, marker != "@cert-authority", matches(name, fields[0]) else { continue }
        let location = "\(file):\(index + 1)"
        let listed = Data(base64Encoded: fields[2]).map { [UInt8]($0) }
        if marker == "@revoked" {
          if listed == key { return .revoked(location) }
          continue
        }
        if listed == key { return .known }
        if fields[1] == type, changed == nil { changed = location }
      }
    }
    return changed.map(Verdict.changed) ?? .unknown
  }

  /// Whether `name` matches a line's host field.
  private static func matches(_ name: String, _ field: String) -> Bool {
    if field.hasPrefix("|1|") {
      let parts = field.split(separator: "|", omittingEmptySubsequences: false)
      guard parts.count == 4, let salt = Data(base64Encoded: String(parts[2])),
        let hash = Data(base64Encoded: String(parts[3]))
      else { return false }
      return HMACSHA1.mac(key: [UInt8](salt), message: Array(name.utf8)) == [UInt8](hash)
    }
    return SSHConfig.matches(name, patterns: [field])
  }

  /// The key's type name, the first string in its blob (RFC 4253 §6.6).
  static func keyType(_ key: [UInt8]) -> String {
    guard key.count >= 4 else { return "unknown" }
    let length = key[0..<4].reduce(0) { $0 << 8 | Int($1) }
    guard length <= key.count - 4 else { return "unknown" }
    return String(decoding: key[4..<(4 + length)], as: UTF8.self)
  }

  /// How ssh names a key type in its messages: `ED25519`, `ECDSA`, `RSA`.
  static func displayType(_ type: String) -> String {
    switch type {
    case "ssh-ed25519": return "ED25519"
    case "ssh-rsa": return "RSA"
    case "ssh-dss": return "DSA"
    case _ where type.hasPrefix("ecdsa-"): return "ECDSA"
    default: return type
    }
  }

  /// ssh's fingerprint notation: `SHA256:` and unpadded base64.
  static func fingerprint(sha256: [UInt8]) -> String {
    "SHA256:" + Data(sha256).base64EncodedString().replacingOccurrences(of: "=", with: "")
  }

  /// Why the key is refused, and how to fix it.
  static func refusal(
    _ verdict: Verdict, host: String, port: Int, type: String, fingerprint: String, alias: String
  ) -> String {
    let named = alias == host ? "'\(host)'" : "'\(host)' (for '\(alias)')"
    let portOption = port == 22 ? "" : "-p \(port) "
    let scan = "ssh-keyscan \(portOption)\(host) >> ~/.ssh/known_hosts"
    let offered = "\(displayType(type)) key \(fingerprint)"
    switch verdict {
    case .known, .unknown:
      return "the ssh host \(named) port \(port) is not in ~/.ssh/known_hosts; it offers the \(offered). "
        + "Check that fingerprint with the server's owner (or its documentation), then run "
        + "'\(scan)' and try again. Folio never accepts a host key on its own"
    case .changed(let location):
      let entry = port == 22 ? host : "[\(host)]:\(port)"
      return "the ssh host key of \(named) port \(port) has CHANGED: it offers the \(offered), "
        + "but \(location) lists another \(displayType(type)) key for it. Someone may be intercepting the "
        + "connection, or the server was reinstalled. Check the new fingerprint with the server's owner; "
        + "only then remove the old entry with 'ssh-keygen -R \"\(entry)\"' and run '\(scan)'"
    case .revoked(let location):
      return "the ssh host key of \(named) port \(port) (\(offered)) is marked @revoked at \(location); "
        + "refusing to connect"
    }
  }
}
