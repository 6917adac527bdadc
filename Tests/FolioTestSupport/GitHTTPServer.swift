import Foundation
import Glibc

/// `git http-backend` behind a small HTTP server on 127.0.0.1 that asks
/// for one user and password (basic auth), as a hosted git server does.
/// Python's `http.server` runs the CGI; every request is logged to
/// ``log`` as `METHOD path status`.
public final class GitHTTPServer {
  public let process: Process
  public let port: Int
  public let directory: String

  /// Serves the repositories under `root` to `user` with `password`.
  public init(root: String, user: String, password: String) throws {
    directory = NSTemporaryDirectory() + "/folio-http-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try Self.script.write(toFile: directory + "/server.py", atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [
      directory + "/server.py", root, user, password, directory + "/port", directory + "/log",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    self.process = process
    let portFile = directory + "/port"
    eventually {
      !process.isRunning || (try? String(contentsOfFile: portFile, encoding: .utf8))?.hasSuffix("\n") == true
    }
    guard let text = try? String(contentsOfFile: portFile, encoding: .utf8),
      let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      process.terminate()
      throw CocoaError(.fileReadUnknown, userInfo: ["server": "git http server did not start"])
    }
    self.port = port
  }

  /// The URL of `repository` (a path under the root).
  public func url(_ repository: String) -> String { "http://127.0.0.1:\(port)/\(repository)" }

  /// Every request so far, one `METHOD path status` per line.
  public var log: String { (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? "" }

  public func stop() {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    eventually(timeout: 5) { !process.isRunning }
    try? FileManager.default.removeItem(atPath: directory)
  }

  deinit { stop() }

  static let script = #"""
    import base64, http.server, os, subprocess, sys

    root, user, password, port_file, log_file = sys.argv[1:6]
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def record(self, status):
            with open(log_file, "a") as log:
                log.write(f"{self.command} {self.path} {status}\n")

        def body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def serve(self):
            data = self.body()
            if self.headers.get("Authorization") != expected:
                self.record(401)
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="folio"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            env = {
                "PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(data)),
                "REMOTE_USER": user, "REMOTE_ADDR": "127.0.0.1",
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            }
            output = subprocess.run(["git", "http-backend"], input=data, env=env, capture_output=True).stdout
            head, _, content = output.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.split(b"\r\n"):
                key, _, value = line.decode().partition(":")
                if key.lower() == "status":
                    status = int(value.strip().split()[0])
                elif key:
                    headers.append((key, value.strip()))
            self.record(status)
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = serve
        do_POST = serve

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as out:
        out.write(f"{server.server_address[1]}\n")
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """#
}
