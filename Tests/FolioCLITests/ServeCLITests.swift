import Folio
import FolioTestSupport
import Foundation
import Testing

/// `folio serve`, end to end: the built binary on a real port, spoken to
/// with curl as any Firebase REST client would.
struct ServeCLITests {
  /// A running `folio serve`, stopped with SIGTERM.
  final class Server: @unchecked Sendable {
    // @unchecked: all state is set once in init; `stderrText` guards itself.
    let process: Process
    let port: Int
    /// The host as it goes in a URL: `127.0.0.1`, or `[::1]` after `--host ::1`.
    let urlHost: String
    private let stderrText: Mutexed<String>

    /// Starts `folio serve` on a random port below the kernel's ephemeral
    /// range (as `GitDaemon` in FolioTests does: the suite's own outgoing
    /// connections take ports in that range), trying another port if the
    /// one picked is taken.
    /// - Parameter launcher: a command that runs the binary, given as its
    ///   first argument, with the rest after it (`sh -c 'ulimit -n 700 &&
    ///   exec "$0" "$@"'`); none by default.
    init(
      in directory: String, arguments: [String] = [], environment: [String: String] = [:],
      launcher: [String] = []
    ) throws {
      let host = arguments.firstIndex(of: "--host").map { arguments[$0 + 1] } ?? "127.0.0.1"
      urlHost = host.contains(":") ? "[\(host)]" : host
      let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
      let ephemeral = text?.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
      for _ in 0..<20 {
        let candidate = Int.random(in: 10_000..<max(ephemeral, 10_001))
        if let started = try Self.launch(
          directory, ["serve", "--port", "\(candidate)"] + arguments, environment, launcher)
        {
          (process, stderrText) = started
          port = candidate
          return
        }
      }
      throw FolioError(.io, "folio serve did not start")
    }

    private static func launch(
      _ directory: String, _ arguments: [String], _ environment: [String: String], _ launcher: [String]
    )
      throws
      -> (Process, Mutexed<String>)?
    {
      let process = Process()
      if let command = launcher.first {
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = launcher.dropFirst() + [FolioRunner.binary] + arguments
      } else {
        process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
        process.arguments = arguments
      }
      process.currentDirectoryURL = URL(fileURLWithPath: directory)
      var env = ProcessInfo.processInfo.environment
      env["FOLIO_INDEX_DAEMON"] = "off"
      env["FOLIO_SERVE_TOKEN"] = nil
      for (key, value) in environment { env[key] = value }
      process.environment = env
      let pipe = Pipe()
      process.standardError = pipe
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      let text = Mutexed<String>("")
      let handle = pipe.fileHandleForReading
      Thread {
        while true {
          let chunk = handle.availableData
          if chunk.isEmpty { break }
          text.set(text.value + String(decoding: chunk, as: UTF8.self))
        }
      }.start()
      eventually { text.value.contains("listening on") || !process.isRunning }
      if text.value.contains("listening on") { return (process, text) }
      if process.isRunning { process.terminate() }
      return nil
    }

    /// What the server printed on stderr so far.
    var log: String { stderrText.value }

    var base: String { "http://\(urlHost):\(port)" }

    /// SIGTERM, then the exit status.
    func stop() -> Int32 {
      if process.isRunning { kill(process.processIdentifier, SIGTERM) }
      process.waitUntilExit()
      return process.terminationStatus
    }
  }

  struct Reply {
    var status: Int
    var headers: [String: String]
    var body: String
    var json: JSONValue? { try? JSONValue(parsing: body) }
  }

  /// One request with curl.
  /// - Parameter waitForContinue: send `Expect: 100-continue` and wait for
  ///   the server's answer before the body. A server that refuses a body
  ///   by its length answers at once and closes; a client still sending
  ///   then gets a reset, which can drop the answer on a loaded machine.
  static func curl(
    _ method: String, _ url: String, body: String? = nil, bodyFile: String? = nil, headers: [String] = [],
    waitForContinue: Bool = false
  ) throws -> Reply {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    var arguments = ["-s", "-i", "-X", method, "--max-time", "30"]
    arguments +=
      waitForContinue ? ["-H", "Expect: 100-continue", "--expect100-timeout", "30"] : ["-H", "Expect:"]
    for header in headers { arguments += ["-H", header] }
    if let body { arguments += ["--data-binary", body] }
    if let bodyFile { arguments += ["--data-binary", "@" + bodyFile] }
    process.arguments = arguments + ["-g", url]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    var text = String(decoding: data, as: UTF8.self)
    var reply = Reply(status: 0, headers: [:], body: "")
    while text.hasPrefix("HTTP/") {
      let end = text.range(of: "\r\n\r\n") ?? text.endIndex..<text.endIndex
      let head = text[..<end.lowerBound].components(separatedBy: "\r\n")
      reply.status = Int(head[0].split(separator: " ")[1]) ?? 0
      reply.headers = [:]
      for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        reply.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
          in: .whitespaces)
      }
      text = String(text[end.upperBound...])
    }
    reply.body = text
    return reply
  }

  /// An `Accept: text/event-stream` client, collecting `(event, data)`.
  final class EventClient: @unchecked Sendable {
    // @unchecked: `events` is guarded by `condition`; the rest is set once.
    let process = Process()
    private let condition = NSCondition()
    private var events: [(String, JSONValue?)] = []
    private var texts: [String] = []

    init(_ url: String) throws {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
      process.arguments = ["-s", "-N", "-H", "Accept: text/event-stream", "-g", url]
      let out = Pipe()
      process.standardOutput = out
      try process.run()
      let handle = out.fileHandleForReading
      Thread { [self] in
        var buffer = ""
        while true {
          let chunk = handle.availableData
          if chunk.isEmpty { break }
          buffer += String(decoding: chunk, as: UTF8.self)
          while let end = buffer.range(of: "\n\n") {
            let block = buffer[..<end.lowerBound]
            buffer = String(buffer[end.upperBound...])
            var event = ""
            var data: JSONValue?
            var text = ""
            for line in block.split(separator: "\n") {
              if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
              if line.hasPrefix("data: ") {
                text = String(line.dropFirst(6))
                data = try? JSONValue(parsing: text)
              }
            }
            condition.lock()
            events.append((event, data))
            texts.append(text)
            condition.broadcast()
            condition.unlock()
          }
        }
      }.start()
    }

    /// Waits for the `n`th event (1-based) and returns it.
    func event(_ n: Int, timeout: Double = stateTimeout) -> (String, JSONValue?)? {
      let deadline = Date().addingTimeInterval(timeout)
      condition.lock()
      defer { condition.unlock() }
      while events.count < n {
        if !condition.wait(until: deadline) { return nil }
      }
      return events[n - 1]
    }

    /// The `n`th event's data line as it was sent, once it has come.
    func text(_ n: Int) -> String? {
      guard event(n) != nil else { return nil }
      condition.lock()
      defer { condition.unlock() }
      return texts[n - 1]
    }

    var count: Int {
      condition.lock()
      defer { condition.unlock() }
      return events.count
    }

    func stop() {
      // Foundation's terminate() can miss a process on Linux; kill(2) does not.
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
      process.waitUntilExit()
    }
  }

  /// A store with two documents written through the CLI, and a server on it.
  static func started(arguments: [String] = []) throws -> (CLIScratch, Server) {
    let scratch = try CLIScratch()
    try scratch.folio("init")
    try scratch.folio("put", "todos", "k1", input: #"{"title":"a","views":1,"lastUpdate":10,"tags":["x"]}"#)
    try scratch.folio("put", "todos", "k2", input: #"{"title":"b","views":5,"lastUpdate":30}"#)
    try scratch.folio("put", "todos", "k3", input: #"{"title":"c","views":2,"lastUpdate":20}"#)
    return (scratch, try Server(in: scratch.path, arguments: arguments))
  }

  // MARK: Reading

  @Test func getsTheStoreATableADocumentAndAField() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let root = try Self.curl("GET", server.base + "/.json")
    #expect(root.status == 200)
    #expect(root.json?["todos"]?["k2"]?["title"] == "b")
    #expect(root.headers["access-control-allow-origin"] == nil)
    #expect(
      try Self.curl("GET", server.base + "/todos.json").json?.objectValue?.keys.sorted() == [
        "k1", "k2", "k3",
      ])
    #expect(try Self.curl("GET", server.base + "/todos/k1.json").json?["title"] == "a")
    #expect(try Self.curl("GET", server.base + "/todos/k1/tags.json").body == #"["x"]"#)
    #expect(try Self.curl("GET", server.base + "/todos/nope.json").body == "null")
    #expect(try Self.curl("GET", server.base + "/todos/k1/nope.json").body == "null")
    #expect(try Self.curl("GET", server.base + "/other.json").body == "null")
    let shallow = try Self.curl("GET", server.base + "/todos.json?shallow=true")
    #expect(shallow.body == #"{"k1":true,"k2":true,"k3":true}"#)
    let pretty = try Self.curl("GET", server.base + "/todos/k2.json?print=pretty")
    #expect(pretty.body.contains("\n  \"title\": \"b\""))
    let silent = try Self.curl("GET", server.base + "/todos/k2.json?print=silent")
    #expect(silent.status == 204 && silent.body.isEmpty)
    #expect(server.log.contains("GET /todos/k2.json 200 "))
  }

  @Test(arguments: [
    (#"orderBy="lastUpdate""#, ["k1", "k3", "k2"]),
    (#"orderBy="lastUpdate"&limitToFirst=2"#, ["k1", "k3"]),
    (#"orderBy="lastUpdate"&limitToLast=1"#, ["k2"]),
    (#"orderBy="lastUpdate"&startAt=15&endAt=30"#, ["k3", "k2"]),
    (#"orderBy="lastUpdate"&equalTo=20"#, ["k3"]),
    (#"orderBy="views"&startAt=2"#, ["k3", "k2"]),
    (#"orderBy="$key"&startAt="k2""#, ["k2", "k3"]),
    (#"orderBy="$key"&endAt="k1""#, ["k1"]),
    (#"orderBy="$value"&limitToFirst=1"#, ["k1"]),
    (#"orderBy="lastUpdate"&limitToFirst=2e0"#, ["k1", "k3"]),
    (#"orderBy="lastUpdate"&limitToLast=1.0"#, ["k2"]),
    (#"orderBy="lastUpdate"&limitToFirst=1e400"#, ["k1", "k3", "k2"]),
    (#"orderBy="lastUpdate"&startAt=99"#, []),
  ])
  func queriesFilterAndLimit(query: String, expected: [String]) throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let escaped = query.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "$", with: "%24")
    let reply = try Self.curl("GET", server.base + "/todos.json?" + escaped)
    #expect(reply.status == 200, "\(reply.body)")
    #expect(reply.json?.objectValue?.keys.sorted() == expected.sorted())
  }

  @Test(arguments: [
    ("/todos.json?orderBy=lastUpdate", 400),
    (#"/todos.json?limitToFirst=2"#, 400),
    (#"/todos.json?orderBy=%22lastUpdate%22&limitToFirst=x"#, 400),
    (#"/todos.json?orderBy=%22lastUpdate%22&limitToFirst=1.5"#, 400),
    (#"/todos.json?orderBy=%22lastUpdate%22&limitToLast=-1"#, 400),
    (#"/todos.json?orderBy=%22lastUpdate%22&startAt=%7Bbad"#, 400),
    (#"/todos.json?orderBy=%22lastUpdate%22&limitToFirst=1&limitToLast=1"#, 400),
    (#"/todos.json?shallow=true&orderBy=%22%24key%22"#, 400),
    ("/todos/..json", 400),
    ("/todos/.hidden.json", 400),
    ("/todos/k1", 404),
  ])
  func badReadsAreClear400s(path: String, status: Int) throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let reply = try Self.curl("GET", server.base + path)
    #expect(reply.status == status, "\(reply.body)")
    #expect(reply.json?["error"]?.stringValue?.isEmpty == false)
  }

  // MARK: Writing

  @Test func everyVerbWritesThroughFolio() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let put = try Self.curl(
      "PUT", server.base + "/todos/k4.json", body: #"{"title":"d","at":{".sv":"timestamp"}}"#)
    #expect(put.status == 200)
    let at = try #require(put.json?["at"]?.intValue)
    #expect(abs(at - Int(Date().timeIntervalSince1970 * 1000)) < 60_000)
    #expect(scratch.read("data/todos/k4.json")?.contains(#""title": "d""#) == true)

    let patch = try Self.curl(
      "PATCH", server.base + "/todos.json",
      body: #"{"k1/views":{".sv":{"increment":2}},"k2/title":"B","k3/tags":null}"#)
    #expect(patch.status == 200, "\(patch.body)")
    #expect(patch.json?["k1/views"] == 3)
    #expect(try Self.curl("GET", server.base + "/todos/k2/title.json").body == #""B""#)
    // The increment is recorded as Folio's transform, so it sums on merge.
    let log = try FolioRunner.shellOutput("cat .folio/ops/*.ndjson", in: scratch.path).output
    #expect(log.contains(#""increment""#))

    let field = try Self.curl("PUT", server.base + "/todos/k1/meta/color.json", body: #""red""#)
    #expect(field.body == #""red""#)
    #expect(try Self.curl("GET", server.base + "/todos/k1/meta.json").body == #"{"color":"red"}"#)

    let post = try Self.curl("POST", server.base + "/todos.json", body: #"{"title":"pushed"}"#)
    let name = try #require(post.json?["name"]?.stringValue)
    #expect(name.count == 26)
    #expect(try Self.curl("GET", server.base + "/todos/\(name)/title.json").body == #""pushed""#)
    let later = try Self.curl("POST", server.base + "/todos.json", body: #"{"title":"later"}"#)
    #expect(try #require(later.json?["name"]?.stringValue) > name, "push keys sort by time")

    #expect(try Self.curl("DELETE", server.base + "/todos/k1/meta.json").status == 200)
    #expect(try Self.curl("GET", server.base + "/todos/k1/meta.json").body == "null")
    #expect(try Self.curl("DELETE", server.base + "/todos/k4.json").body == "null")
    #expect(scratch.read("data/todos/k4.json") == nil)
    let viaOverride = try Self.curl(
      "POST", server.base + "/todos/k2.json", body: #"{"views":6}"#,
      headers: ["X-HTTP-Method-Override: PATCH"])
    #expect(viaOverride.status == 200)
    #expect(try Self.curl("GET", server.base + "/todos/k2/views.json").body == "6")
    // The CLI sees every write.
    #expect(try JSONValue(parsing: try scratch.folio("get", "todos", "k2").stdout)["views"] == 6)
  }

  @Test func badWritesAreRefusedAndWriteNothing() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let before = try FolioRunner.shellOutput(
      "cat data/todos/*.json .folio/ops/*.ndjson | md5sum", in: scratch.path)
    let big = scratch.path + "/big.json"
    try Data(repeating: UInt8(ascii: " "), count: 17 << 20).write(to: URL(fileURLWithPath: big))
    let cases: [(String, String, String?, Int)] = [
      ("PUT", "/todos/k1.json", "{bad", 400),
      ("PUT", "/todos/k1.json", "[1,2]", 400),
      ("PUT", "/todos/k1.json", #"{"id":"other"}"#, 400),
      ("PATCH", "/todos/k1.json", "3", 400),
      ("PATCH", "/todos.json", #"{"k1":{"a":1},"k1/b":2}"#, 400),
      ("PATCH", "/todos/k1.json", #"{"views":{".sv":{"increment":1.5}}}"#, 400),
      ("PUT", "/todos/k1.json", #"{"x":{".sv":"nope"}}"#, 400),
      ("PUT", "/todos/..json", "{}", 400),
      ("PUT", "/nope/k1.json", "{}", 404),
      ("PUT", "/.json", "{}", 400),
      ("PUT", "/todos/k1.json", nil, 413),
    ]
    for (method, path, body, status) in cases {
      let reply = try Self.curl(
        method, server.base + path, body: body, bodyFile: body == nil ? big : nil,
        waitForContinue: body == nil)
      #expect(reply.status == status, "\(method) \(path) \(body ?? "big"): \(reply.body)")
      #expect(reply.json?["error"]?.stringValue?.isEmpty == false)
    }
    try FileManager.default.removeItem(atPath: big)
    let after = try FolioRunner.shellOutput(
      "cat data/todos/*.json .folio/ops/*.ndjson | md5sum", in: scratch.path)
    #expect(before.output == after.output)
  }

  // MARK: Conditional writes

  @Test func etagsAndIfMatch() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let url = server.base + "/todos/k1/views.json"
    let read = try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"])
    let etag = try #require(read.headers["etag"])
    #expect(try Self.curl("GET", url).headers["etag"] == nil)
    #expect(try Self.curl("PUT", url, body: "2", headers: ["if-match: \(etag)"]).status == 200)
    let stale = try Self.curl("PUT", url, body: "3", headers: ["if-match: \(etag)"])
    #expect(stale.status == 412)
    #expect(stale.body == "2")
    let fresh = try #require(stale.headers["etag"])
    #expect(fresh == (try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"]).headers["etag"]))
    #expect(try Self.curl("DELETE", url, headers: ["if-match: \(etag)"]).status == 412)
    #expect(try Self.curl("DELETE", url, headers: ["if-match: \(fresh)"]).status == 200)
    #expect(try Self.curl("GET", url).body == "null")
  }

  /// `if-none-match`, the ETag a conditional write answers with, and
  /// `null_etag`, as the Firebase SDKs use them; method override as a
  /// query parameter; empty path segments inside a path.
  @Test func conditionalRequestsAsTheSDKsMakeThem() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let url = server.base + "/todos/k1/title.json"
    let etag = try #require(try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"]).headers["etag"])
    let unchanged = try Self.curl("GET", url, headers: ["if-none-match: \(etag)"])
    #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.headers["etag"] == etag)
    let written = try Self.curl("PUT", url, body: #""b""#, headers: ["if-match: \(etag)"])
    #expect(written.status == 200 && written.body == #""b""#)
    let fresh = try #require(written.headers["etag"], "a conditional write answers with the new ETag")
    #expect(fresh != etag)
    #expect(fresh == (try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"]).headers["etag"]))
    let changed = try Self.curl("GET", url, headers: ["if-none-match: \(etag)"])
    #expect(changed.status == 200 && changed.body == #""b""# && changed.headers["etag"] == fresh)
    #expect(try Self.curl("PUT", url, body: #""c""#).headers["etag"] == nil, "unconditional: no ETag")

    // null_etag: only where nothing is.
    let created = try Self.curl(
      "PUT", server.base + "/todos/k9.json", body: #"{"title":"new"}"#,
      headers: ["if-match: null_etag"])
    #expect(created.status == 200, "\(created.body)")
    #expect(created.headers["etag"] != nil)
    let again = try Self.curl(
      "PUT", server.base + "/todos/k9.json", body: #"{"title":"other"}"#,
      headers: ["if-match: null_etag"])
    #expect(again.status == 412)
    #expect(again.json?["title"] == "new")
    #expect(try Self.curl("GET", server.base + "/todos/k9/title.json").body == #""new""#)

    // The method as a query parameter, and empty segments.
    let deleted = try Self.curl("POST", server.base + "/todos/k2.json?x-http-method-override=DELETE")
    #expect(deleted.status == 200 && deleted.body == "null")
    #expect(try Self.curl("GET", server.base + "/todos/k2.json").body == "null")
    #expect(try Self.curl("GET", server.base + "/todos//k1.json").json?["title"] == "c")
    let patched = try Self.curl("PATCH", server.base + "/todos//k1.json", body: #"{"title":"d"}"#)
    #expect(patched.status == 200, "\(patched.body)")
    #expect(try Self.curl("GET", server.base + "/todos/k1/title.json").body == #""d""#)
  }

  /// Firebase's `print`, `timeout` and `writeSizeLimit` parameters: a
  /// value Firebase takes is taken, any other is a 400 that says what is.
  @Test(arguments: [
    ("GET", "/todos/k1/title.json?print=pretty", 200),
    ("GET", "/todos/k1/title.json?print=verbose", 400),
    ("GET", "/todos/k1/title.json?timeout=3s", 200),
    ("GET", "/todos/k1/title.json?timeout=500ms", 200),
    ("GET", "/todos/k1/title.json?timeout=2min", 200),
    ("GET", "/todos/k1/title.json?timeout=16min", 400),
    ("GET", "/todos/k1/title.json?timeout=soon", 400),
    ("PUT", "/todos/k1/title.json?writeSizeLimit=tiny", 200),
    ("PUT", "/todos/k1/title.json?writeSizeLimit=huge", 400),
  ])
  func firebaseParametersAreTakenOrRefused(method: String, path: String, status: Int) throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let reply = try Self.curl(method, server.base + path, body: method == "PUT" ? #""z""# : nil)
    #expect(reply.status == status, "\(reply.body)")
    if status == 400 {
      #expect(reply.json?["error"]?.stringValue?.contains("must be") == true, "\(reply.body)")
      #expect(try Self.curl("GET", server.base + "/todos/k1/title.json").body == #""a""#, "nothing written")
    }
  }

  @Test func twoCompareAndSetLoopsLoseNoIncrement() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let url = server.base + "/todos/k1/counter.json"
    _ = try Self.curl("PUT", url, body: "0")
    let failures = Mutexed<[String]>([])
    let group = DispatchGroup()
    for _ in 0..<2 {
      group.enter()
      Thread {
        defer { group.leave() }
        do {
          var reply = try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"])
          var done = 0
          while done < 200 {
            let value = reply.json?.intValue ?? -1_000_000
            let attempt = try Self.curl(
              "PUT", url, body: "\(value + 1)", headers: ["if-match: \(reply.headers["etag"] ?? "")"])
            if attempt.status == 200 {
              done += 1
              reply = try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"])
            } else if attempt.status == 412 {
              reply = attempt
            } else {
              failures.set(failures.value + ["\(attempt.status) \(attempt.body)"])
              return
            }
          }
        } catch {
          failures.set(failures.value + ["\(error)"])
        }
      }.start()
    }
    group.wait()
    #expect(failures.value.isEmpty)
    #expect(try Self.curl("GET", url).body == "400")
  }

  // MARK: Auth

  @Test func tokensAreRequiredWhenSet() throws {
    let (scratch, server) = try Self.started(arguments: ["--token", "s3cret"])
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    #expect(try Self.curl("GET", server.base + "/todos/k1.json").status == 401)
    #expect(try Self.curl("GET", server.base + "/todos/k1.json?auth=wrong").status == 401)
    #expect(
      try Self.curl("GET", server.base + "/todos/k1.json", headers: ["Authorization: Bearer s3cre"]).status
        == 401)
    #expect(try Self.curl("PUT", server.base + "/todos/k9.json", body: "{}").status == 401)
    #expect(scratch.read("data/todos/k9.json") == nil)
    #expect(try Self.curl("GET", server.base + "/todos/k1.json?auth=s3cret").status == 200)
    #expect(
      try Self.curl("GET", server.base + "/todos/k1.json", headers: ["Authorization: Bearer s3cret"]).status
        == 200)
    // A preflight carries no credentials; with no origin allowed, it gets
    // no CORS headers either (ServeSafetyCLITests has the allowed ones).
    let preflight = try Self.curl("OPTIONS", server.base + "/todos/k1.json")
    #expect(preflight.status == 204)
    #expect(preflight.headers["access-control-allow-methods"] == nil)
  }

  @Test func loopbackWithoutATokenAcceptsAnyAuthorization() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    #expect(
      try Self.curl("GET", server.base + "/todos/k1.json", headers: ["Authorization: Bearer x"]).status == 200
    )
  }

  @Test func aNetworkHostWithoutATokenIsRefused() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let refused = try scratch.folio("serve", "--host", "0.0.0.0", "--port", "18999")
    #expect(refused.status == 64)
    #expect(refused.stderr.contains("needs a token"))
  }

  // MARK: Streaming

  /// In Firebase a null child is an absent one: nulls are dropped at any
  /// depth, an object left empty goes with them, `{}` or null removes a
  /// document, and writing null where nothing is changes nothing (no event).
  @Test func nullMeansAbsent() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let url = server.base + "/todos/k5.json"
    let put = try Self.curl(
      "PUT", url, body: #"{"title":"t","b":null,"c":{"d":null},"e":{"f":1,"g":null},"h":{"i":{"j":null}}}"#)
    #expect(put.status == 200, "\(put.body)")
    let stored = try #require(try Self.curl("GET", url).json)
    #expect(stored.objectValue?.keys.sorted() == ["e", "id", "title"], "\(stored)")
    #expect(stored["e"]?.objectValue?.keys.sorted() == ["f"])
    #expect(scratch.read("data/todos/k5.json")?.contains("null") == false)

    let document = try EventClient(url)
    defer { document.stop() }
    #expect(try #require(document.event(1)).0 == "put")
    // Null where nothing is: no change, so no event; the title's event is
    // the next one.
    #expect(try Self.curl("PATCH", url, body: #"{"nothere":null,"e/g":null}"#).status == 200)
    #expect(try Self.curl("PATCH", url, body: #"{"title":"u"}"#).status == 200)
    let next = try #require(document.event(2))
    #expect(next.1?["data"]?["title"] == "u" || next.1?["data"] == "u", "\(next)")

    // Removing the last member of an object removes the object.
    #expect(try Self.curl("PATCH", url, body: #"{"e/f":null}"#).status == 200)
    #expect(try Self.curl("GET", server.base + "/todos/k5/e.json").body == "null")
    #expect(try Self.curl("GET", url).json?.objectValue?.keys.sorted() == ["id", "title"])

    // {} (or all nulls) removes the document.
    #expect(try Self.curl("PUT", url, body: #"{"title":null}"#).status == 200)
    #expect(try Self.curl("GET", url).body == "null")
    #expect(scratch.read("data/todos/k5.json") == nil)
    #expect(try Self.curl("PUT", server.base + "/todos/k1.json", body: "{}").status == 200)
    #expect(try Self.curl("GET", server.base + "/todos/k1.json").body == "null")
  }

  /// Firebase reads an object whose keys are integers, the largest below
  /// twice their number, as an array: reads, ETags and streams alike.
  @Test func integerKeyedObjectsReadAsArrays() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let url = server.base + "/todos/k7.json"
    let body =
      #"{"o":{"0":"a","1":"b","3":"d"},"sparse":{"0":1,"9":2},"mixed":{"0":1,"x":2},"n":{"o":{"0":{"0":true}},"p":{"1":2}}}"#
    #expect(try Self.curl("PUT", url, body: body).status == 200)
    let read = try #require(try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"]).json)
    #expect(read["o"] == ["a", "b", .null, "d"], "\(read)")
    #expect(read["sparse"]?.objectValue?.keys.sorted() == ["0", "9"])
    #expect(read["mixed"]?.objectValue?.keys.sorted() == ["0", "x"])
    #expect(read["n"]?["o"] == [[true]], "\(read)")
    // The SDKs' rule (`maxKey < 2 * numKeys` in ChildrenNode.val): one key,
    // the largest 1, is an array with a hole.
    #expect(read["n"]?["p"] == [.null, 2], "\(read)")
    #expect(try Self.curl("GET", server.base + "/todos/k7/o.json").body == #"["a","b",null,"d"]"#)
    // The file keeps what was written.
    #expect(scratch.read("data/todos/k7.json")?.contains(#""3": "d""#) == true)
    // The ETag is the served value's, so a compare-and-set over it works.
    let etag = try #require(try Self.curl("GET", url, headers: ["X-Firebase-ETag: true"]).headers["etag"])
    let set = try Self.curl(
      "PUT", server.base + "/todos/k7/mixed.json", body: "1", headers: ["if-match: \(etag)"])
    #expect(set.status == 412, "if-match on the document's ETag at a child path compares the child")
    let childTag = try #require(
      try Self.curl("GET", server.base + "/todos/k7/o.json", headers: ["X-Firebase-ETag: true"]).headers[
        "etag"])
    let swapped = try Self.curl(
      "PUT", server.base + "/todos/k7/o.json", body: #"["z"]"#, headers: ["if-match: \(childTag)"])
    #expect(swapped.status == 200, "\(swapped.body)")
    let stream = try EventClient(url)
    defer { stream.stop() }
    #expect(stream.event(1)?.1?["data"]?["n"]?["o"] == [[true]])
  }

  /// `{".sv": {"increment": n}}` as Firebase has it off counter columns:
  /// a fraction is allowed, and a value that is not a number is replaced
  /// by the amount; a counter column keeps Folio's rules.
  @Test func serverIncrementsFollowFirebaseOffCounterColumns() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let url = server.base + "/todos/k1.json"
    let body =
      #"{"title":{".sv":{"increment":2}},"score":{".sv":{"increment":1.5}},"n":{".sv":{"increment":3}}}"#
    let reply = try Self.curl("PATCH", url, body: body)
    #expect(reply.status == 200, "\(reply.body)")
    let read = try #require(try Self.curl("GET", url).json)
    #expect(read["title"] == 2, "a string is replaced by the amount: \(read)")
    #expect(read["score"] == 1.5, "\(read)")
    #expect(read["n"] == 3)
    _ = try Self.curl(
      "PATCH", url, body: #"{"score":{".sv":{"increment":1}},"n":{".sv":{"increment":0.25}}}"#)
    let again = try #require(try Self.curl("GET", url).json)
    #expect(again["score"] == 2.5 && again["n"] == 3.25, "\(again)")
    // The counter column keeps integer increments, which add up on merge.
    let counter = try Self.curl("PATCH", url, body: #"{"views":{".sv":{"increment":0.5}}}"#)
    #expect(counter.status == 400 && counter.body.contains("counter column"), "\(counter.body)")
    #expect(try Self.curl("PATCH", url, body: #"{"views":{".sv":{"increment":"x"}}}"#).status == 400)
    #expect(try Self.curl("GET", server.base + "/todos/k1/views.json").body == "1")
    // A sum JSON cannot write is refused, and nothing is written.
    #expect(try Self.curl("PATCH", url, body: #"{"big":1e308}"#).status == 200)
    let before = scratch.read("data/todos/k1.json")
    let overflow = try Self.curl("PATCH", url, body: #"{"big":{".sv":{"increment":1e308}}}"#)
    #expect(overflow.status == 400 && overflow.body.contains("out of range"), "\(overflow.body)")
    #expect(scratch.read("data/todos/k1.json") == before)
  }

  @Test func streamsAFirstPutThenAnEventPerWriteAndPerEdit() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let document = try EventClient(server.base + "/todos/k1.json")
    let table = try EventClient(server.base + "/todos.json")
    defer {
      document.stop()
      table.stop()
    }
    let first = try #require(document.event(1))
    #expect(first.0 == "put")
    #expect(first.1?["path"] == "/")
    #expect(first.1?["data"]?["title"] == "a")
    let tableFirst = try #require(table.event(1))
    #expect(tableFirst.1?["data"]?.objectValue?.keys.sorted() == ["k1", "k2", "k3"])

    _ = try Self.curl("PATCH", server.base + "/todos/k1.json", body: #"{"title":"over http"}"#)
    #expect(document.event(2)?.1?["data"]?["title"] == "over http")
    let put = try #require(table.event(2))
    #expect(put.0 == "put")
    #expect(put.1?["path"] == "/k1")

    // One transaction touching two documents is one patch event.
    _ = try Self.curl("PATCH", server.base + "/todos.json", body: #"{"k2/views":9,"k3":null}"#)
    let patch = try #require(table.event(3))
    #expect(patch.0 == "patch")
    #expect(patch.1?["data"]?["k3"] == .null)
    #expect(patch.1?["data"]?["k2"]?["views"] == 9)

    // An edit behind the server's back, as an editor would make it.
    try FolioRunner.shell(#"sed -i 's/"over http"/"by sed"/' data/todos/k1.json"#, in: scratch.path)
    #expect(document.event(3)?.1?["data"]?["title"] == "by sed")
    #expect(table.event(4)?.1?["data"]?["title"] == "by sed")

    // A write through the CLI, another process.
    let applied = try scratch.folio(
      "apply", "todos", "k1", "--op", "update", "--transforms", #"{"views":{"op":"increment","by":1}}"#)
    #expect(applied.status == 0, "\(applied.stderr)")
    #expect(document.event(4)?.1?["data"]?["views"] == 2)
  }

  @Test func streamsAFieldAndAQuery() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let field = try EventClient(server.base + "/todos/k2/views.json")
    let query = try EventClient(server.base + "/todos.json?orderBy=%22lastUpdate%22&limitToFirst=1")
    defer {
      field.stop()
      query.stop()
    }
    #expect(field.event(1)?.1?["data"] == 5)
    #expect(query.event(1)?.1?["data"]?.objectValue?.keys == ["k1"])
    // A change elsewhere in the document sends nothing on the field.
    _ = try Self.curl("PATCH", server.base + "/todos/k2.json", body: #"{"title":"x"}"#)
    _ = try Self.curl("PATCH", server.base + "/todos/k2.json", body: #"{"views":6,"lastUpdate":1}"#)
    #expect(field.event(2)?.1?["data"] == 6)
    // k2 moves into the one-document window, k1 out.
    let change = try #require(query.event(2))
    #expect(change.0 == "patch")
    #expect(change.1?["data"]?["k1"] == .null)
    #expect(change.1?["data"]?["k2"]?["views"] == 6)
  }
}

extension ServeCLITests {
  /// Folio's own read parameters and `.info` paths for data browsers:
  /// `where`, `startKey`/`endKey`, `/.info/count`, `/.info/conflicts` and
  /// what `/.info/tables.json` says of each table.
  @Test func browsingParametersAndPaths() throws {
    let (scratch, server) = try Self.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    func get(_ path: String) throws -> Reply { try Self.curl("GET", server.base + path) }
    // k1 views 1, k2 views 5, k3 views 2.
    #expect(try get("/.info/count/todos.json").body == "3")
    #expect(try get("/.info/count/todos.json?where=views%20%3E%201").body == "2")
    let filtered = try get("/todos.json?where=views%20%3E%201")
    #expect(filtered.json?.objectValue?.keys.sorted() == ["k2", "k3"], "\(filtered.body)")
    // Limits page, the count does not.
    #expect(try get(#"/.info/count/todos.json?orderBy=%22views%22&limitToFirst=1"#).body == "3")
    let bad = try get("/todos.json?where=views%20%3E")
    #expect(bad.status == 400)
    // Just past the end, where the value is missing.
    #expect(bad.json?["column"] == 8, "\(bad.body)")
    #expect(try get("/.info/count/todos.json?where=(").status == 400)
    // Ties at a cursor are broken by pk, as the SDKs' startAt(value, key).
    try scratch.folio("put", "todos", "k4", input: #"{"title":"d","views":2,"lastUpdate":40}"#)
    let after = try get(#"/todos.json?orderBy=%22views%22&startAfter=2&startKey=%22k3%22&limitToFirst=2"#)
    #expect(after.json?.objectValue?.keys.sorted() == ["k2", "k4"], "\(after.body)")
    let before = try get(#"/todos.json?orderBy=%22views%22&endBefore=2&endKey=%22k4%22&limitToLast=2"#)
    #expect(before.json?.objectValue?.keys.sorted() == ["k1", "k3"], "\(before.body)")
    #expect(try get(#"/todos.json?orderBy=%22views%22&startKey=%22k3%22"#).status == 400)
    #expect(try get(#"/todos.json?orderBy=%22views%22&startAt=1&startKey=3"#).status == 400)
    // A filter is for tables.
    #expect(try get("/todos/k1.json?where=views%20%3E%201").status == 400)

    let info = try get("/.info/tables.json").json?["todos"]
    #expect(info?["indexes"] == ["lastUpdate"], "\(String(describing: info))")
    #expect(info?["kinds"] == ["tags": "set", "views": "counter"])
    #expect(info?["key"] == "id")

    #expect(try get("/.info/conflicts/todos/k1.json").body == "[]")
    let none = try Self.curl(
      "POST", server.base + "/.info/conflicts/todos/k1.json", body: #"{"path":"title","resolution":"keep"}"#)
    #expect(none.status == 404, "\(none.body)")
    let unclear = try Self.curl(
      "POST", server.base + "/.info/conflicts/todos/k1.json", body: #"{"path":"title","resolution":"maybe"}"#)
    #expect(unclear.status == 400 && unclear.body.contains("takeOther"), "\(unclear.body)")
    #expect(try Self.curl("DELETE", server.base + "/.info/conflicts/todos/k1.json").status == 405)
    #expect(try get("/.info/count/todos/k1.json").status == 400)
  }
}
