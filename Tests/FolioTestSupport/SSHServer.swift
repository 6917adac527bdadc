import Foundation
import Glibc

/// A real OpenSSH server (`/usr/sbin/sshd`) on 127.0.0.1, with its own
/// host key, config and `authorized_keys` in a temporary folder.
///
/// It runs under a small shell that holds a pipe from this process: when
/// the test process exits, however it exits, the pipe closes and the shell
/// stops sshd, so no server outlives the suite.
public final class SSHServer: @unchecked Sendable {
  // @unchecked: every property is set in init and never changed.
  public let directory: String
  public let port: Int
  /// The host's public key line (`ssh-ed25519 AAAA…`).
  public let hostPublicKey: String
  private let shell: Process
  private let lifeline: Pipe

  /// Starts sshd, trusting the public keys in `authorizedKeys`.
  public init(directory: String, authorizedKeys: [String]) throws {
    self.directory = directory
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    // The privilege separation folder sshd insists on.
    try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
    try SSHServer.keygen(directory + "/host_ed25519", comment: "folio-test-host")
    hostPublicKey = try String(contentsOfFile: directory + "/host_ed25519.pub", encoding: .utf8)
      .split(separator: " ").prefix(2).joined(separator: " ")
    try authorizedKeys.joined(separator: "\n").appending("\n").write(
      toFile: directory + "/authorized_keys", atomically: true, encoding: .utf8)
    for _ in 0..<20 {
      let candidate = LoopbackPort.random()
      let config = """
        Port \(candidate)
        ListenAddress 127.0.0.1
        HostKey \(directory)/host_ed25519
        AuthorizedKeysFile \(directory)/authorized_keys
        PidFile \(directory)/sshd.pid
        StrictModes no
        UsePAM no
        PermitRootLogin yes
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        SetEnv PATH=/usr/local/bin:/usr/bin:/bin:/usr/lib/git-core
        """
      try config.write(toFile: directory + "/sshd_config", atomically: true, encoding: .utf8)
      let shell = Process()
      let lifeline = Pipe()
      shell.executableURL = URL(fileURLWithPath: "/bin/sh")
      shell.arguments = [
        "-c", #"/usr/sbin/sshd -D -e -f "$1" 2>>"$2" & pid=$!; read _; kill $pid"#, "sh",
        directory + "/sshd_config", directory + "/sshd.log",
      ]
      shell.standardInput = lifeline
      shell.standardOutput = FileHandle.nullDevice
      shell.standardError = FileHandle.nullDevice
      try shell.run()
      eventually(timeout: 3) { LoopbackPort.canConnect(port: candidate) }
      if LoopbackPort.canConnect(port: candidate) {
        port = candidate
        self.shell = shell
        self.lifeline = lifeline
        return
      }
      // Its port was taken (sshd exited), or it never listened: next port.
      try? lifeline.fileHandleForWriting.close()
      shell.waitUntilExit()
    }
    throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "sshd did not start"])
  }

  /// Stops sshd.
  public func stop() {
    try? lifeline.fileHandleForWriting.close()
  }

  /// What sshd logged, for a failing test's message.
  public var log: String { (try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? "" }

  /// Makes an ed25519 key pair at `path` (and `path.pub`).
  public static func keygen(_ path: String, passphrase: String = "", comment: String = "folio-test") throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-keygen")
    process.arguments = ["-q", "-t", "ed25519", "-N", passphrase, "-C", comment, "-f", path]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
  }
}
