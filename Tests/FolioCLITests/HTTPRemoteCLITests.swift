import FolioTestSupport
import Foundation
import Testing

/// http remotes against `git http-backend` behind a server that asks for a
/// password (``GitHTTPServer``), reached as `git push` reaches them: the
/// password comes from git's own credential store in a temporary `HOME`,
/// and Folio knows nothing about it.
@Suite struct HTTPRemoteCLITests {
  static let user = "folio"
  static let password = "s3cret horse"

  /// A bare repository served over http, seeded from replica `a` (which
  /// syncs over the file system), and a `HOME` for the http client.
  struct Box {
    let scratch: CLIScratch
    let server: GitHTTPServer
    var home: String { scratch.path + "/home" }
    var url: String { server.url("remote.git") }
    /// Extra environment for folio.
    var environment: [String: String] = [:]

    init() throws {
      scratch = try CLIScratch(yaml: nil)
      try FileManager.default.createDirectory(
        atPath: scratch.path + "/home", withIntermediateDirectories: true)
      #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
      #expect(
        try FolioRunner.shell("git --git-dir=remote.git config http.receivepack true", in: scratch.path) == 0)
      try scratch.write("a/folio.yaml", GitPullTests.yaml)
      #expect(try FolioRunner.run(["init"], in: scratch.path + "/a").status == 0)
      #expect(
        try FolioRunner.run(["put", "todos", "t", "-"], in: scratch.path + "/a", input: #"{"views": 1}"#)
          .status == 0)
      #expect(
        try FolioRunner.shell("git remote add origin \(scratch.path)/remote.git", in: scratch.path + "/a")
          == 0)
      #expect(try FolioRunner.run(["sync"], in: scratch.path + "/a").status == 0)
      server = try GitHTTPServer(
        root: scratch.path, user: HTTPRemoteCLITests.user, password: HTTPRemoteCLITests.password)
    }

    func remove() {
      server.stop()
      scratch.remove()
    }

    /// git's `credential.helper store`, holding `password` for the server.
    func storeCredentials(password: String) throws {
      let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
      try "[credential]\n\thelper = store\n".write(
        toFile: home + "/.gitconfig", atomically: true, encoding: .utf8)
      try "http://\(HTTPRemoteCLITests.user):\(encoded)@127.0.0.1:\(server.port)\n".write(
        toFile: home + "/.git-credentials", atomically: true, encoding: .utf8)
    }

    /// Runs folio in `replica` with this HOME and nothing else to log in with.
    @discardableResult
    func folio(
      _ arguments: [String], in replica: String, expectSuccess: Bool = true,
      sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> FolioRunner.Result {
      let clean = [
        "HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "FOLIO_GIT_TOKEN": "", "FOLIO_GIT_PASSWORD": "",
        "FOLIO_GIT_USERNAME": "", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
      ]
      let result = try FolioRunner.run(
        arguments, in: scratch.path + "/" + replica, environment: clean.merging(environment) { $1 })
      if expectSuccess {
        #expect(
          result.status == 0, "folio \(arguments.joined(separator: " ")): \(result.stderr)",
          sourceLocation: sourceLocation)
      }
      return result
    }

    func views(_ replica: String) -> Int? { scratch.views(in: replica) }
    func increment(_ by: Int) -> [String] { CLIScratch.increment(by) }
  }

  /// The password lives only in git's credential store: clone, then a
  /// sync that fetches, merges and pushes over http.
  @Test func passwordFromGitsCredentialStore() throws {
    let box = try Box()
    defer { box.remove() }
    try box.storeCredentials(password: Self.password)
    try box.folio(["clone", box.url, "b"], in: ".")
    #expect(box.views("b") == 1)
    try box.folio(box.increment(10), in: "a")
    try box.folio(["sync"], in: "a")
    try box.folio(box.increment(100), in: "b")
    let synced = try box.folio(["sync"], in: "b")
    #expect(synced.stdout.contains("pushed to origin"), "\(synced.stdout)")
    try box.folio(["sync"], in: "a")
    #expect(box.views("a") == 111 && box.views("b") == 111)
    #expect(box.server.log.contains("POST /remote.git/git-receive-pack 200"), "\(box.server.log)")
    #expect(!synced.stderr.contains(Self.password))
  }

  /// No terminal and a wrong password: refused at once, never waiting for
  /// a prompt, with how to give git credentials.
  @Test func aWrongPasswordFailsAtOnceWithTheFix() throws {
    let box = try Box()
    defer { box.remove() }
    try box.storeCredentials(password: "wrong")
    let started = Date()
    let cloned = try box.folio(["clone", box.url, "b"], in: ".", expectSuccess: false)
    // Not a speed check: a run that waited for a prompt would never end.
    #expect(Date().timeIntervalSince(started) < stateTimeout)
    #expect(cloned.status == 1)
    for expected in ["CREDENTIALS", "Authentication failed", "credential helper", "FOLIO_GIT_TOKEN"] {
      #expect(cloned.stderr.contains(expected), "\(expected) in \(cloned.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: box.scratch.path + "/b"))

    // With no credentials at all, the same.
    try? FileManager.default.removeItem(atPath: box.home + "/.git-credentials")
    let bare = try box.folio(["clone", box.url, "b"], in: ".", expectSuccess: false)
    #expect(bare.status == 1 && bare.stderr.contains("CREDENTIALS"), "\(bare.stderr)")
  }

  /// With a terminal, git asks on it, as for `git push`: a pseudo-terminal
  /// gives folio one, and answers typed once each prompt shows log in.
  @Test func aTerminalIsAskedForThePassword() throws {
    let box = try Box()
    defer { box.remove() }
    // A person at the terminal: type each answer once its prompt shows.
    try box.scratch.write(
      "typist.py",
      """
      import os, pty, select, sys
      home, folio, url, user, password = sys.argv[1:6]
      pid, fd = pty.fork()
      if pid == 0:
          os.execve(folio, [folio, "clone", url, "b"], dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1"))
      seen = b""
      def read_until(text):
          global seen
          while text not in seen:
              ready, _, _ = select.select([fd], [], [], 60)
              if not ready:
                  return
              try:
                  chunk = os.read(fd, 4096)
              except OSError:
                  return
              if not chunk:
                  return
              seen += chunk
      read_until(b"Username for")
      os.write(fd, user.encode() + b"\\n")
      read_until(b"Password for")
      os.write(fd, password.encode() + b"\\n")
      read_until(b"\\0")
      _, status = os.waitpid(pid, 0)
      sys.stdout.write(seen.decode(errors="replace"))
      sys.exit(os.waitstatus_to_exitcode(status))

      """)
    let session = try FolioRunner.shellOutput(
      "python3 typist.py '\(box.home)' '\(FolioRunner.binary)' '\(box.url)' '\(Self.user)' '\(Self.password)'",
      in: box.scratch.path)
    #expect(session.status == 0, "\(session.output)")
    #expect(
      session.output.contains("Username for 'http://127.0.0.1:\(box.server.port)'"), "\(session.output)")
    #expect(session.output.contains("Password for"), "\(session.output)")
    #expect(!session.output.contains(Self.password), "the password was echoed")
    #expect(box.views("b") == 1)
  }

  /// `FOLIO_GIT_TOKEN` is offered by a helper after the user's, and never
  /// printed.
  @Test func tokenFromTheEnvironment() throws {
    var box = try Box()
    defer { box.remove() }
    box.environment = ["FOLIO_GIT_USERNAME": Self.user, "FOLIO_GIT_TOKEN": Self.password]
    let cloned = try box.folio(["clone", box.url, "b"], in: ".")
    #expect(!cloned.stderr.contains(Self.password) && !cloned.stdout.contains(Self.password))
    try box.folio(box.increment(5), in: "b")
    try box.folio(["sync"], in: "b")
    try box.folio(["sync"], in: "a")
    #expect(box.views("a") == 6)
    #expect(
      (try? String(contentsOfFile: box.scratch.path + "/b/.git/config", encoding: .utf8))?.contains(
        Self.password)
        == false)
  }

  /// `url.<base>.insteadOf` rewrites the URL for fetches, and `pushurl`
  /// sends pushes elsewhere: both as git reads them.
  @Test func insteadOfAndPushURL() throws {
    let box = try Box()
    defer { box.remove() }
    try box.storeCredentials(password: Self.password)
    try "[url \"http://127.0.0.1:\(box.server.port)/\"]\n\tinsteadOf = folio-host:\n".write(
      toFile: box.home + "/.gitconfig", atomically: true, encoding: .utf8)
    try ("[credential]\n\thelper = store\n").appendLine(to: box.home + "/.gitconfig")
    try box.folio(["clone", "folio-host:remote.git", "b"], in: ".")
    #expect(box.views("b") == 1)
    #expect(box.server.log.contains("git-upload-pack"), "the clone went over http: \(box.server.log)")

    // a fetches over the file system and pushes over http.
    #expect(
      try FolioRunner.shell(
        "git config remote.origin.pushurl folio-host:remote.git", in: box.scratch.path + "/a") == 0)
    let pushesBefore = box.server.log.components(separatedBy: "git-receive-pack 200").count
    try box.folio(box.increment(7), in: "a")
    try box.folio(["sync"], in: "a")
    #expect(box.server.log.components(separatedBy: "git-receive-pack 200").count > pushesBefore)
    try box.folio(["sync"], in: "b")
    #expect(box.views("b") == 8)
  }
}

extension String {
  /// Appends this text to the file at `path`.
  fileprivate func appendLine(to path: String) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(utf8))
  }
}
