import FolioTestSupport
import Foundation
import Glibc
import Testing

/// Credentials against a real git smart-HTTP server (`git http-backend`)
/// that wants HTTP basic auth, served on 127.0.0.1 by the test.
struct CredentialsCLITests {
  /// A small HTTP front for `git http-backend`: it answers 401 unless the
  /// request carries the expected user and token, then runs the CGI.
  static let server = #"""
    import base64, os, subprocess, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    root, user, token = sys.argv[1], sys.argv[2], sys.argv[3]
    expected = "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int(self.rfile.readline().strip(), 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def serve(self):
            body = self.body()
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="folio"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                       QUERY_STRING=query, REQUEST_METHOD=self.command, REMOTE_USER=user,
                       REMOTE_ADDR="127.0.0.1", CONTENT_TYPE=self.headers.get("Content-Type", ""),
                       CONTENT_LENGTH=str(len(body)))
            out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
            sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
            head, _, rest = out.partition(sep)
            status, headers = 200, []
            for line in head.decode().splitlines():
                key, _, value = line.partition(": ")
                if key.lower() == "status":
                    status = int(value.split()[0])
                elif key:
                    headers.append((key, value))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(rest)))
            self.end_headers()
            self.wfile.write(rest)

        do_GET = serve
        do_POST = serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """#

  /// The server process and its port.
  final class Server {
    let process = Process()
    let port: Int

    init(root: String, user: String, token: String, script: String) throws {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["python3", script, root, user, token]
      let stdout = Pipe()
      process.standardOutput = stdout
      process.standardError = FileHandle.nullDevice
      try process.run()
      var line = Data()
      while true {
        let byte = stdout.fileHandleForReading.readData(ofLength: 1)
        if byte.isEmpty || byte == Data([UInt8(ascii: "\n")]) { break }
        line.append(byte)
      }
      guard let port = Int(String(decoding: line, as: UTF8.self)) else {
        process.terminate()
        throw CocoaError(.fileReadCorruptFile)
      }
      self.port = port
    }

    func stop() {
      guard process.isRunning else { return }
      // SIGKILL and a poll: Foundation's waitUntilExit can miss the exit here.
      kill(process.processIdentifier, SIGKILL)
      for _ in 0..<500 where process.isRunning { usleep(10_000) }
    }
  }

  @Test func httpsStyleTokenFromTheEnvironmentIsUsedAndNeverPrinted() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    try scratch.write("server.py", Self.server)
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    let server = try Server(
      root: scratch.path, user: "alice", token: "s3cret-token", script: scratch.path + "/server.py")
    defer { server.stop() }
    let url = "http://127.0.0.1:\(server.port)/remote.git"

    try scratch.write("a/folio.yaml", CLIScratch.yaml)
    let a = scratch.path + "/a"
    #expect(try FolioRunner.run(["init"], in: a).status == 0)
    #expect(try FolioRunner.shell("git remote add origin \(url)", in: a) == 0)
    #expect(try FolioRunner.run(["put", "todos", "t", "-"], in: a, input: #"{"views": 1}"#).status == 0)

    // No credentials: a clear error that says what to set.
    let empty = [
      "FOLIO_GIT_USERNAME": "", "FOLIO_GIT_TOKEN": "", "FOLIO_GIT_PASSWORD": "", "SSH_AUTH_SOCK": "",
    ]
    let refused = try FolioRunner.run(["sync"], in: a, environment: empty)
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("CREDENTIALS"), "\(refused.stderr)")
    #expect(refused.stderr.contains("FOLIO_GIT_USERNAME and FOLIO_GIT_TOKEN"), "\(refused.stderr)")

    // A wrong token is refused too, and the secret is not echoed.
    let wrong = try FolioRunner.run(
      ["sync"], in: a, environment: ["FOLIO_GIT_USERNAME": "alice", "FOLIO_GIT_TOKEN": "not-it"])
    #expect(wrong.status != 0)
    #expect(!wrong.stderr.contains("not-it") && !wrong.stdout.contains("not-it"))

    // The right one: the push lands, and a clone with it gets the document.
    let good = ["FOLIO_GIT_USERNAME": "alice", "FOLIO_GIT_TOKEN": "s3cret-token"]
    let pushed = try FolioRunner.run(["sync"], in: a, environment: good)
    #expect(pushed.status == 0, "\(pushed.stderr)")
    #expect(!pushed.stderr.contains("s3cret") && !pushed.stdout.contains("s3cret"))
    let cloned = try FolioRunner.run(["clone", url, "b"], in: scratch.path, environment: good)
    #expect(cloned.status == 0, "\(cloned.stderr)")
    #expect(scratch.read("b/data/todos/t.json")?.contains("\"views\": 1") == true)
  }
}
