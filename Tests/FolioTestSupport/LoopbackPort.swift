import FolioSystem
import Foundation

/// Ports for test servers on 127.0.0.1 (git daemon, sshd).
public enum LoopbackPort {
  /// A random port below the kernel's ephemeral range: the suite makes many
  /// outgoing connections at once, and one of them can hold any port in
  /// that range as its local port (a CI run lost a git daemon restart on
  /// port 39224 that way).
  public static func random() -> Int {
    Int.random(in: 10_000..<max(ephemeralStart(), 10_001))
  }

  /// The first port of the kernel's ephemeral range (32768 by default).
  public static func ephemeralStart() -> Int {
    let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
    return text?.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
  }

  /// Whether something accepts TCP connections on 127.0.0.1:`port`.
  public static func canConnect(port: Int) -> Bool {
    Loopback.accepts(port: port)
  }
}
