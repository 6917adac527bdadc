import Folio
import FolioTestSupport
import Foundation
import Testing

/// `folio serve` tried as an attacker would: requests from other origins,
/// other Host names, bodies sent without the token, half-sent requests,
/// streams dropped, a token file emptied, and keys Firebase refuses.
/// docs/security.md lists each rule with its test here.
struct ServeSafetyCLITests {
  typealias Server = ServeCLITests.Server
  typealias EventClient = ServeCLITests.EventClient

  static func curl(_ method: String, _ url: String, body: String? = nil, headers: [String] = []) throws
    -> ServeCLITests.Reply
  { try ServeCLITests.curl(method, url, body: body, headers: headers) }

  /// Runs `body` with a server started by ``ServeCLITests/started(arguments:)``,
  /// then stops it (expecting exit 0) and removes the store.
  static func serving(_ arguments: [String] = [], _ body: (CLIScratch, Server) throws -> Void) throws {
    let (scratch, server) = try ServeCLITests.started(arguments: arguments)
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    try body(scratch, server)
  }

  /// Runs `script` with python3 and returns what it printed; the script
  /// gets the server's port as its first argument.
  static func python(_ script: String, port: Int, in scratch: CLIScratch) throws -> String {
    try scratch.write("probe.py", script)
    let result = try FolioRunner.shellOutput("python3 probe.py \(port)", in: scratch.path)
    #expect(result.status == 0, "\(result.output)")
    return result.output
  }

  // MARK: Browsers and origins

  @Test func repliesCarryNoCORSHeadersByDefault() throws {
    try Self.serving { scratch, server in
      for (method, path) in [("GET", "/todos.json"), ("GET", "/"), ("OPTIONS", "/todos.json")] {
        let reply = try Self.curl(method, server.base + path, headers: ["Accept: text/html"])
        #expect(reply.status < 300, "\(method) \(path): \(reply.status)")
        let cors = reply.headers.keys.filter { $0.hasPrefix("access-control-") }
        #expect(cors.isEmpty, "\(method) \(path): \(cors)")
      }
    }
  }

  @Test(arguments: ["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"])
  func aRequestFromAnotherOriginIsRefusedBeforeAnythingHappens(method: String) throws {
    try Self.serving { scratch, server in
      let before = scratch.read("data/todos/k1.json")
      let path = method == "POST" ? "/todos.json" : "/todos/k1.json"
      let body = method == "GET" || method == "HEAD" || method == "OPTIONS" ? nil : #"{"title":"evil"}"#
      let reply = try Self.curl(
        method, server.base + path, body: body,
        headers: ["Origin: http://evil.example", "Content-Type: text/plain"])
      #expect(reply.status == 403)
      #expect(
        reply.json?["error"]?.stringValue?.contains("--cors http://evil.example") == true, "\(reply.body)")
      #expect(reply.headers["access-control-allow-origin"] == nil)
      #expect(scratch.read("data/todos/k1.json") == before)
      #expect(try FolioRunner.shell("ls data/todos | wc -l | grep -qx 3", in: scratch.path) == 0)
      // Another port on the same host is another origin.
      let sibling = try Self.curl(
        method, server.base + path, body: body, headers: ["Origin: http://127.0.0.1:\(server.port + 1)"])
      #expect(sibling.status == 403)
      #expect(scratch.read("data/todos/k1.json") == before)
    }
  }

  @Test func aBrowserRequestFromAnotherSiteWithoutAnOriginIsRefusedButALinkToThePageOpens() throws {
    try Self.serving { scratch, server in
      // <script src> or <img src> from another site: no Origin, but Sec-Fetch-*.
      let read = try Self.curl(
        "GET", server.base + "/todos.json", headers: ["Sec-Fetch-Site: same-site", "Sec-Fetch-Mode: no-cors"])
      #expect(read.status == 403)
      let page = try Self.curl(
        "GET", server.base + "/",
        headers: ["Accept: text/html", "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate"])
      #expect(page.status == 200)
      // The page's own requests.
      let own = try Self.curl(
        "PATCH", server.base + "/todos/k1.json", body: #"{"title":"mine"}"#,
        headers: ["Origin: \(server.base)", "Sec-Fetch-Site: same-origin", "Sec-Fetch-Mode: cors"])
      #expect(own.status == 200, "\(own.body)")
      #expect(own.headers["access-control-allow-origin"] == nil)
      #expect(scratch.read("data/todos/k1.json")?.contains(#""title": "mine""#) == true)
    }
  }

  @Test func anOriginNamedWithCorsOrInFolioYamlGetsTheHeadersAndNoOtherDoes() throws {
    try Self.serving(["--cors", "http://app.example:3000"]) { scratch, server in
      let preflight = try Self.curl(
        "OPTIONS", server.base + "/todos/k1.json",
        headers: ["Origin: http://app.example:3000", "Access-Control-Request-Method: PATCH"])
      #expect(preflight.status == 204)
      #expect(preflight.headers["access-control-allow-origin"] == "http://app.example:3000")
      #expect(preflight.headers["access-control-allow-methods"]?.contains("PATCH") == true)
      #expect(preflight.headers["vary"] == "Origin")
      let write = try Self.curl(
        "PATCH", server.base + "/todos/k1.json", body: #"{"title":"app"}"#,
        headers: ["Origin: http://app.example:3000"])
      #expect(write.status == 200)
      #expect(write.headers["access-control-allow-origin"] == "http://app.example:3000")
      #expect(
        try Self.curl("GET", server.base + "/todos.json", headers: ["Origin: http://app.example"]).status
          == 403
      )
      // folio.yaml's serve: cors: adds an origin while the server runs.
      try FolioRunner.shell(
        "printf '\\nserve:\\n  cors: [\"https://other.example\"]\\n' >> folio.yaml", in: scratch.path)
      var other = try Self.curl(
        "GET", server.base + "/todos.json", headers: ["Origin: https://other.example"])
      try eventually(timeout: 30) {
        other = try Self.curl("GET", server.base + "/todos.json", headers: ["Origin: https://other.example"])
        return other.status == 200
      }
      #expect(other.status == 200)
      #expect(other.headers["access-control-allow-origin"] == "https://other.example")
    }
  }

  @Test(arguments: [
    (["--cors", "*"], "wildcard"), (["--cors", "null"], "sandboxed"),
    (["--cors", "https://app.example/"], "no path"), (["--cors", "app.example"], "http://"),
    (["--allow-host", "*.example"], "host name"),
  ])
  func aCorsOriginOrHostThatCannotBeOneIsAUsageError(arguments: [String], message: String) throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let result = try FolioRunner.run(["serve", "--port", "1"] + arguments, in: scratch.path)
    #expect(result.status == 64)
    #expect(result.stderr.contains(message), "\(result.stderr)")
  }

  @Test func aWildcardInFolioYamlIsRefusedAtItsLine() throws {
    let scratch = try CLIScratch(
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\nserve:\n  cors: [\"*\"]\n")
    defer { scratch.remove() }
    let result = try scratch.folio("query", "todos")
    #expect(result.status != 0)
    #expect(result.stderr.contains("folio.yaml:6:10: error: 'cors' in 'serve'"), "\(result.stderr)")
  }

  @Test func theHostHeaderMustBeANameTheServerAnswersTo() throws {
    try Self.serving(["--allow-host", "folio.example"]) { scratch, server in
      let url = server.base + "/todos/k1.json"
      for host in [
        "127.0.0.1:\(server.port)", "localhost:\(server.port)", "[::1]:\(server.port)", "folio.example",
      ] {
        #expect(try Self.curl("GET", url, headers: ["Host: \(host)"]).status == 200, "\(host)")
      }
      // DNS rebinding: a name the attacker controls, resolved to 127.0.0.1.
      for host in [
        "attacker.example:\(server.port)", "127.0.0.1:1", "localhost", "127.0.0.1.attacker.example",
      ] {
        let reply = try Self.curl("PUT", url, body: #"{"title":"x"}"#, headers: ["Host: \(host)"])
        #expect(reply.status == 421, "\(host): \(reply.status)")
      }
      #expect(scratch.read("data/todos/k1.json")?.contains(#""title": "a""#) == true)
    }
  }

  // MARK: Nothing before authentication

  /// Forty uploads of 15 MB without the token each get 401 after their
  /// headers alone: the script never sends the bodies, so a server that
  /// read them first would never answer.
  @Test func theTokenIsCheckedBeforeTheBodyIsRead() throws {
    try Self.serving(["--token", "t0k", "--timeout", "600"]) { scratch, server in
      let output = try Self.python(
        """
        import socket, sys
        port = int(sys.argv[1])
        socks = []
        for i in range(40):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"PUT /todos/k%d.json HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n"
                      b"Content-Length: 15728640\\r\\n\\r\\n" % (i, port) + b"{" * 65536)
            socks.append(s)
        for s in socks:
            s.settimeout(120)
            print(s.recv(64).split(b"\\r\\n")[0].decode())
        """, port: server.port, in: scratch)
      #expect(
        output.components(separatedBy: "\n").filter { $0 == "HTTP/1.1 401 Unauthorized" }.count == 40,
        "\(output)")
      // With the token, a body over the limit is refused from its length alone.
      let large = try Self.python(
        """
        import socket, sys
        port = int(sys.argv[1])
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"PUT /todos/k9.json?auth=t0k HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n"
                  b"Content-Length: 104857600\\r\\n\\r\\n" % port)
        s.settimeout(120)
        print(s.recv(64).split(b"\\r\\n")[0].decode())
        """, port: server.port, in: scratch)
      #expect(large.contains("HTTP/1.1 413"), "\(large)")
      #expect(scratch.read("data/todos/k9.json") == nil)
    }
  }

  /// 600 half-sent requests from one address (127.0.0.2) take at most that
  /// address's share of connections (256): past it, each closes the oldest
  /// one still without a request, which is told so (408). A client with
  /// the token, from another address, is answered.
  @Test func halfSentRequestsFromOneAddressDoNotLockOutAClientWithTheToken() throws {
    try Self.serving(["--token", "t0k", "--timeout", "600"]) { scratch, server in
      let output = try Self.python(
        """
        import socket, sys, urllib.request
        port = int(sys.argv[1])
        held = []
        for i in range(600):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /todos.json HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n" % port)
            held.append(s)
        reply = urllib.request.urlopen(
            "http://127.0.0.1:%d/todos/k1.json?auth=t0k" % port, timeout=120).read()
        print("answered", reply.decode())
        kinds = {}
        for s in held:
            s.setblocking(False)
            try:
                data = s.recv(64)
                kind = data.split(b"\\r\\n")[0].decode() if data else "closed"
            except BlockingIOError:
                kind = "open"
            except OSError:
                kind = "error"
            kinds[kind] = kinds.get(kind, 0) + 1
        for kind in sorted(kinds):
            print(kind, kinds[kind])
        """, port: server.port, in: scratch)
      #expect(output.contains(#"answered {"#), "\(output)")
      #expect(output.contains("open 256\n"), "\(output)")
      #expect(output.contains("HTTP/1.1 408 Request Timeout 344\n"), "\(output)")
    }
  }

  @Test func aConnectionThatSendsNothingIsClosedAfterTheTimeout() throws {
    try Self.serving(["--timeout", "1"]) { scratch, server in
      let output = try Self.python(
        """
        import socket, sys
        port = int(sys.argv[1])
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /todos.json HTTP/1.1\\r\\nHost: 127.0.0.1")
        s.settimeout(120)
        print("closed" if s.recv(64) == b"" else "answered")
        """, port: server.port, in: scratch)
      #expect(output == "closed\n")
    }
  }

  /// A stream whose client leaves frees its slot at once: with one slot,
  /// the next stream is let in long before the first keep-alive (30 s)
  /// would have found the socket closed.
  @Test func aDroppedStreamFreesItsSlot() throws {
    try Self.serving(["--max-streams", "1"]) { scratch, server in
      let first = try EventClient(server.base + "/todos/k1.json")
      #expect(first.event(1)?.0 == "put")
      first.stop()
      let admitted = try eventually(timeout: 10) {
        let next = try EventClient(server.base + "/todos/k1.json")
        defer { next.stop() }
        return next.event(1, timeout: 1)?.0 == "put"
      }
      #expect(admitted)
    }
  }

  @Test func aTokenFileThatIsEmptiedOrRemovedLetsNoOneIn() throws {
    try ServeOptionsCLITests.servingWithTokenFile { scratch, server in
      let url = server.base + "/todos/k1.json"
      func status(_ credential: String?) throws -> Int {
        try Self.curl("GET", url + (credential.map { "?auth=" + $0 } ?? "")).status
      }
      func waitFor(_ credential: String?, _ expected: Int) throws -> Bool {
        try eventually(timeout: 30) { try status(credential) == expected }
      }
      #expect(try status("first") == 200)
      #expect(try status(nil) == 401)
      // `: > token` empties it, as `echo new > token` does on its way.
      try FolioRunner.shell(": > token", in: scratch.path)
      #expect(try waitFor("first", 401))
      #expect(try status(nil) == 401)
      #expect(try status("") == 401)
      try FolioRunner.shell("echo second > token", in: scratch.path)
      #expect(try waitFor("second", 200))
      try FolioRunner.shell("rm token", in: scratch.path)
      #expect(try waitFor("second", 401))
      #expect(try status(nil) == 401)
      try FolioRunner.shell("echo third > token", in: scratch.path)
      #expect(try waitFor("third", 200))
      #expect(server.log.contains("every request gets 401"))
    }
  }

  // MARK: Keys and paths

  static let refusedKeys = [
    "", "a.b", "a$", "a#b", "[a", "a]", "a/b", "a\\u0001", "a\\u007f", String(repeating: "k", count: 769),
  ]

  @Test(arguments: refusedKeys)
  func aKeyFirebaseRefusesIsRefusedAnywhereInABody(key: String) throws {
    try Self.serving { scratch, server in
      let before = scratch.read("data/todos/k1.json")
      let bodies: [(String, String, String)] = [
        ("PUT", "/todos/k1.json", #"{"title":"x","\#(key)":1}"#),
        ("PUT", "/todos/k1.json", #"{"title":"x","deep":{"deeper":[{"\#(key)":1}]}}"#),
        ("PUT", "/todos.json", #"{"k1":{"\#(key)":1}}"#),
        ("POST", "/todos.json", #"{"nested":{"\#(key)":true}}"#),
        ("PATCH", "/todos/k1.json", #"{"title":{"\#(key)":1}}"#),
        ("PATCH", "/todos.json", #"{"k1/\#(key)":1}"#),
      ]
      // In a PATCH path a slash separates keys, and a trailing one is allowed.
      for (method, path, body) in bodies
      where !((key.isEmpty || key == "a/b") && method == "PATCH" && path == "/todos.json") {
        let reply = try Self.curl(method, server.base + path, body: body)
        #expect(reply.status == 400, "\(method) \(path) \(body): \(reply.status) \(reply.body)")
        #expect(reply.json?["error"] != nil)
      }
      #expect(scratch.read("data/todos/k1.json") == before)
      #expect(try FolioRunner.shell("ls data/todos | wc -l | grep -qx 3", in: scratch.path) == 0)
    }
  }

  @Test func aValueDeeperThanFirebasesLimitIsRefused() throws {
    try Self.serving { scratch, server in
      // /todos/k1 is two keys deep; 30 more are allowed, 31 are not.
      let allowed = String(repeating: #"{"a":"#, count: 29) + "1" + String(repeating: "}", count: 29)
      #expect(try Self.curl("PUT", server.base + "/todos/k1/f.json", body: allowed).status == 200)
      let deep = String(repeating: #"{"a":"#, count: 30) + "1" + String(repeating: "}", count: 30)
      let refused = try Self.curl("PUT", server.base + "/todos/k1/f.json", body: deep)
      #expect(refused.status == 400)
      #expect(
        refused.json?["error"]?.stringValue?.contains("deeper than the limit of 32") == true,
        "\(refused.body)")
      let path = (0..<31).map { "p\($0)" }.joined(separator: "/")
      #expect(try Self.curl("PUT", server.base + "/todos/k1/\(path).json", body: "1").status == 400)
    }
  }

  @Test(arguments: [
    ("/todos.json", #"{"": {}}"#), ("/todos.json", #"{"/": null}"#), ("/todos/k1.json", #"{"/": {}}"#),
    ("/todos/k1.json", #"{"//": 1}"#), ("/todos/k1.json", #"{"a//b": 1}"#),
  ])
  func aPatchPathMustNameAChild(path: String, body: String) throws {
    try Self.serving { scratch, server in
      let before = scratch.read("data/todos/k1.json")
      let reply = try Self.curl("PATCH", server.base + path, body: body)
      #expect(reply.status == 400, "\(reply.body)")
      #expect(scratch.read("data/todos/k1.json") == before)
      #expect(try FolioRunner.shell("ls data/todos | wc -l | grep -qx 3", in: scratch.path) == 0)
      // A leading slash still names a child, as Firebase's clients send it.
      let child = try Self.curl("PATCH", server.base + "/todos/k1.json", body: #"{"/title": "slash"}"#)
      #expect(child.status == 200)
      #expect(child.json == ["/title": "slash"])
    }
  }

  /// 20,000 paths in one PATCH, set and then removed, on one document and
  /// under one nested object: each document is read and recorded once.
  /// (`folio-bench serve` times 40,000.)
  @Test func aPatchOfManyPathsWritesThemAll() throws {
    try Self.serving { scratch, server in
      let count = 20_000
      func body(_ value: (Int) -> String) -> String {
        "{" + (0..<count).map { #""n/f\#($0)":\#(value($0))"# }.joined(separator: ",") + "}"
      }
      try scratch.write("set.json", body { "\($0)" })
      let set = try ServeCLITests.curl(
        "PATCH", server.base + "/todos/k1.json", bodyFile: scratch.path + "/set.json")
      #expect(set.status == 200)
      #expect(set.json?.objectValue?.count == count)
      #expect(set.json?["n/f19999"] == 19999)
      let document = try #require(try Self.curl("GET", server.base + "/todos/k1.json").json)
      #expect(document["n"]?.objectValue?.count == count)
      #expect(document["title"] == "a")
      try scratch.write("unset.json", body { _ in "null" })
      let unset = try ServeCLITests.curl(
        "PATCH", server.base + "/todos/k1.json", bodyFile: scratch.path + "/unset.json")
      #expect(unset.status == 200)
      let after = try #require(try Self.curl("GET", server.base + "/todos/k1.json").json)
      #expect(after["n"]?.objectValue?.count ?? 0 == 0)
      #expect(after["views"] == 1)
    }
  }

  /// `/todos/k1/.json` names a child with an empty name, not the document:
  /// a DELETE of it must not delete the document.
  @Test func aPathEndingInAnEmptySegmentIsRefused() throws {
    try Self.serving { scratch, server in
      for method in ["DELETE", "PUT", "GET"] {
        let reply = try Self.curl(method, server.base + "/todos/k1/.json", body: method == "PUT" ? "1" : nil)
        #expect(reply.status == 400, "\(method): \(reply.body)")
      }
      #expect(scratch.read("data/todos/k1.json")?.contains(#""title": "a""#) == true)
    }
  }

  @Test func aWriteRepliesWithTheStateAfterIt() throws {
    try Self.serving { scratch, server in
      let table = try Self.curl("PUT", server.base + "/todos.json", body: #"{"k7":{"title":"new"}}"#)
      #expect(table.status == 200)
      #expect(table.json == ["k7": ["id": "k7", "title": "new"]])
      let patched = try Self.curl(
        "PATCH", server.base + "/todos.json", body: #"{"k7/views":{".sv":{"increment":2}},"k8":{"t":1}}"#)
      #expect(patched.json == ["k7/views": 2, "k8": ["id": "k8", "t": 1]])
      let root = try Self.curl("PATCH", server.base + "/.json", body: #"{"todos":{"k9":{"t":9}}}"#)
      #expect(root.json == ["todos": ["k9": ["id": "k9", "t": 9]]])
      #expect(try Self.curl("GET", server.base + "/todos.json?shallow=true").json == ["k9": true])
    }
  }
}
