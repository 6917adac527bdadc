import Folio
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// `folio serve` options and changes while it runs: the page, a token file
/// that changes (`auth_revoked`), a table removed (`cancel`), IPv6, the
/// body and stream limits, `format=export` and `if-match` on PATCH.
struct ServeOptionsCLITests {
  typealias Server = ServeCLITests.Server
  typealias EventClient = ServeCLITests.EventClient

  static func curl(
    _ method: String, _ url: String, body: String? = nil, headers: [String] = []
  ) throws -> ServeCLITests.Reply {
    try ServeCLITests.curl(method, url, body: body, headers: headers)
  }

  @Test func servesThePageWithoutATokenAndTheTableListWithOne() throws {
    let (scratch, server) = try ServeCLITests.started(arguments: ["--token", "t0k"])
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let page = try Self.curl("GET", server.base + "/", headers: ["Accept: text/html"])
    #expect(page.status == 200)
    #expect(page.headers["content-type"] == "text/html; charset=utf-8")
    #expect(page.body.contains("<title>Folio</title>"))
    #expect(page.body.contains("new EventSource("))
    #expect(try Self.curl("GET", server.base + "/.info/tables.json").status == 401)
    let tables = try Self.curl("GET", server.base + "/.info/tables.json?auth=t0k")
    #expect(tables.status == 200)
    #expect(tables.json?["todos"]?["count"] == 3)
    #expect(tables.json?["todos"]?["key"] == "id")
    // A JSON client asking for / still gets the hint, not HTML.
    let json = try Self.curl("GET", server.base + "/", headers: ["Accept: application/json"])
    #expect(json.status == 404)
    #expect(json.json?["error"]?.stringValue?.contains(".json") == true)
  }

  /// Runs `body` with a server whose `--token-file` holds `first`, on a
  /// store with one document, k1.
  static func servingWithTokenFile(_ body: (CLIScratch, Server) throws -> Void) throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    try scratch.folio("put", "todos", "k1", input: #"{"title":"a"}"#)
    try scratch.write("token", "first\n")
    let server = try Server(in: scratch.path, arguments: ["--token-file", "token"])
    defer { #expect(server.stop() == 0) }
    try body(scratch, server)
  }

  @Test func aChangedTokenFileRevokesStreamsOpenedWithTheOldToken() throws {
    try Self.servingWithTokenFile { scratch, server in
      let stream = try EventClient(server.base + "/todos/k1.json?auth=first")
      defer { stream.stop() }
      #expect(stream.event(1)?.1?["data"]?["title"] == "a")
      // Written the way an editor saves: a new file renamed over the old.
      try scratch.write("token.new", "second\n")
      try FolioRunner.shell("mv token.new token", in: scratch.path)
      let revoked = try #require(stream.event(2))
      #expect(revoked.0 == "auth_revoked")
      // Plain text, as Firebase sends it and the admin SDK reads it.
      #expect(stream.text(2) == "credential is no longer valid")
      #expect(try Self.curl("GET", server.base + "/todos/k1.json?auth=first").status == 401)
      #expect(try Self.curl("GET", server.base + "/todos/k1.json?auth=second").status == 200)
      #expect(server.log.contains("the token changed"))
      // A stream opened with the new token lives through a change that keeps it.
      let kept = try EventClient(server.base + "/todos/k1.json?auth=second")
      defer { kept.stop() }
      #expect(kept.event(1)?.0 == "put")
      try FolioRunner.shell("printf 'second\\n\\n' > token", in: scratch.path)
      _ = try Self.curl("PATCH", server.base + "/todos/k1.json?auth=second", body: #"{"title":"b"}"#)
      #expect(kept.event(2)?.1?["data"]?["title"] == "b")
    }
  }

  @Test func removingATableCancelsItsStreamsAndAddingOneServesIt() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let table = try EventClient(server.base + "/todos.json")
    let document = try EventClient(server.base + "/todos/k1.json")
    let root = try EventClient(server.base + "/.json")
    defer {
      table.stop()
      document.stop()
      root.stop()
    }
    #expect(table.event(1)?.0 == "put")
    #expect(document.event(1)?.0 == "put")
    #expect(root.event(1)?.1?["data"]?["todos"]?["k1"]?["title"] == "a")
    let removed = try scratch.folio("tables", "rm", "todos")
    #expect(removed.status == 0, "\(removed.stderr)")
    #expect(table.event(2)?.0 == "cancel")
    #expect(document.event(2)?.0 == "cancel")
    let gone = try #require(root.event(2))
    #expect(gone.0 == "put")
    #expect(gone.1?["path"] == "/todos")
    #expect(gone.1?["data"] == .null)
    #expect(try Self.curl("GET", server.base + "/todos/k1.json").body == "null")
    #expect(try Self.curl("PUT", server.base + "/todos/k1.json", body: "{}").status == 404)

    let added = try scratch.folio("tables", "add", "notes")
    #expect(added.status == 0, "\(added.stderr)")
    let joined = try #require(root.event(3))
    #expect(joined.1?["path"] == "/notes")
    #expect(try Self.curl("PUT", server.base + "/notes/n1.json", body: #"{"text":"hi"}"#).status == 200)
    #expect(root.event(4)?.1?["path"] == "/notes/n1")
    #expect(scratch.read(newTableFile("data/notes", "n1"))?.contains(#""text": "hi""#) == true)
  }

  @Test func listensOnIPv6Loopback() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    try scratch.folio("put", "todos", "k1", input: #"{"title":"a"}"#)
    let server = try Server(in: scratch.path, arguments: ["--host", "::1"])
    defer { #expect(server.stop() == 0) }
    #expect(server.log.contains("listening on http://[::1]:\(server.port)/"))
    #expect(try Self.curl("GET", server.base + "/todos/k1/title.json").body == #""a""#)
    #expect(try Self.curl("PUT", server.base + "/todos/k2.json", body: #"{"title":"b"}"#).status == 200)
    #expect(scratch.read("data/todos/k2.json") != nil)
    // It does not answer on IPv4 (another test's server may hold that
    // port there, so what counts is that this one never sees the request).
    _ = try Self.curl("GET", "http://127.0.0.1:\(server.port)/todos/k1.json?from=ipv4")
    #expect(!server.log.contains("from=ipv4") && !server.log.contains("GET /todos/k1.json "), "\(server.log)")
  }

  @Test func bodyAndStreamLimitsComeFromFlags() throws {
    let (scratch, server) = try ServeCLITests.started(arguments: ["--max-body", "1K", "--max-streams", "1"])
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let big = #"{"text":""# + String(repeating: "x", count: 1100) + #""}"#
    let refused = try Self.curl("PUT", server.base + "/todos/k9.json", body: big)
    #expect(refused.status == 413)
    #expect(refused.json?["error"]?.stringValue?.contains("1024") == true)
    #expect(scratch.read("data/todos/k9.json") == nil)
    #expect(try Self.curl("PUT", server.base + "/todos/k9.json", body: #"{"text":"small"}"#).status == 200)
    let first = try EventClient(server.base + "/todos/k1.json")
    defer { first.stop() }
    #expect(first.event(1)?.0 == "put")
    let second = try Self.curl(
      "GET", server.base + "/todos/k2.json", headers: ["Accept: text/event-stream"])
    #expect(second.status == 503)
    #expect(second.json?["error"]?.stringValue?.contains("at most 1") == true)
  }

  @Test(arguments: [
    ["--max-body", "0"], ["--max-body", "12Q"], ["--max-streams", "-1"], ["--max-streams", "x"],
    ["--token", "a", "--token-file", "b"],
  ])
  func badFlagsAreUsageErrors(arguments: [String]) throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    let result = try FolioRunner.run(["serve", "--port", "18998"] + arguments, in: scratch.path)
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains("error:"))
  }

  @Test func formatExportAndIfMatchOnPatch() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    // Folio keeps no priorities: the export form is the value itself.
    for path in ["/todos/k1.json", "/todos.json", "/todos/k1/views.json", "/.json"] {
      let plain = try Self.curl("GET", server.base + path)
      let export = try Self.curl("GET", server.base + path + "?format=export")
      #expect(export.status == 200)
      #expect(export.body == plain.body)
    }
    #expect(try Self.curl("GET", server.base + "/todos.json?format=csv").status == 400)

    let etag = try #require(
      try Self.curl("GET", server.base + "/todos/k1.json", headers: ["X-Firebase-ETag: true"]).headers["etag"]
    )
    let saved = try Self.curl(
      "PATCH", server.base + "/todos/k1.json", body: #"{"title":"A"}"#, headers: ["if-match: \(etag)"])
    #expect(saved.status == 200, "\(saved.body)")
    let stale = try Self.curl(
      "PATCH", server.base + "/todos/k1.json", body: #"{"title":"B"}"#, headers: ["if-match: \(etag)"])
    #expect(stale.status == 412)
    #expect(stale.json?["title"] == "A")
    #expect(stale.headers["etag"] != nil && stale.headers["etag"] != etag)
    #expect(try Self.curl("GET", server.base + "/todos/k1/title.json").body == #""A""#)
    #expect(
      try Self.curl("POST", server.base + "/todos.json", body: "{}", headers: ["if-match: \(etag)"]).status
        == 400)
  }

  @Test func concurrentWritesShareTransactionsAndFailAlone() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    // Concurrent requests go in shared transactions; a bad one among them
    // (an increment that is not a number, a stale if-match) fails alone.
    let statuses = Mutex<[Int]>([])
    let group = DispatchGroup()
    for client in 0..<8 {
      group.enter()
      Thread {
        defer { group.leave() }
        for n in 0..<20 {
          let bad = n % 5 == 4
          let body =
            bad
            ? #"{"counter":{".sv":{"increment":"1"}}}"#
            : #"{"counter":{".sv":{"increment":1}},"c\#(client)":\#(n)}"#
          let headers = n % 7 == 6 ? ["if-match: stale"] : []
          let reply = try? Self.curl("PATCH", server.base + "/todos/k1.json", body: body, headers: headers)
          statuses.withLock { $0.append(reply?.status ?? -1) }
        }
      }.start()
    }
    group.wait()
    let counts = Dictionary(grouping: statuses.withLock { $0 }, by: { $0 }).mapValues(\.count)
    // n = 4, 9, 14, 19 are bad; n = 6, 13 stale (and good otherwise).
    #expect(counts == [200: 8 * 14, 400: 8 * 4, 412: 8 * 2], "\(counts)")
    let document = try #require(try Self.curl("GET", server.base + "/todos/k1.json").json)
    #expect(document["counter"] == .number(String(8 * 14)))
    for client in 0..<8 { #expect(document["c\(client)"] == 18) }
    let ops = try FolioRunner.shellOutput("cat .folio/ops/*.ndjson | grep -c counter", in: scratch.path)
    #expect(ops.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(8 * 14)")
  }

  /// Concurrent writes are durable through the journal alone: killed
  /// with -9 in the middle of a burst, between checkpoints, the server
  /// leaves a store the next command completes with every write it
  /// acknowledged; left alone, it flushes and empties the journal once
  /// writes pause.
  @Test func acknowledgedWritesSurviveAKillBeforeTheirFilesAreFlushed() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer { scratch.remove() }
    let journal = scratch.path + "/.git/folio/journal"
    func journalSize() -> Int {
      ((try? FileManager.default.attributesOfItem(atPath: journal))?[.size] as? Int) ?? 0
    }
    /// Each client's acknowledged PATCHes.
    func burst(_ clients: Int, _ each: Int, killAfter: Int? = nil) -> [Int] {
      let acked = Mutex([Int](repeating: 0, count: clients))
      let group = DispatchGroup()
      for client in 0..<clients {
        group.enter()
        Thread {
          defer { group.leave() }
          for n in 0..<each {
            let reply = try? Self.curl(
              "PATCH", server.base + "/todos/p\(client).json",
              body: #"{"counter":{".sv":{"increment":1}},"n":\#(n)}"#)
            guard reply?.status == 200 else { return }
            let total = acked.withLock { acked in
              acked[client] += 1
              return acked.reduce(0, +)
            }
            if total == killAfter { kill(server.process.processIdentifier, SIGKILL) }
          }
        }.start()
      }
      group.wait()
      return acked.withLock { $0 }
    }
    #expect(burst(4, 10) == [10, 10, 10, 10])
    // Writes paused: the checkpoint flushes the files and empties the journal.
    #expect(eventually { journalSize() == 0 }, "the checkpoint never emptied the journal")
    let acked = burst(4, 40, killAfter: 100)
    server.process.waitUntilExit()
    #expect(acked.reduce(0, +) >= 100)
    var ops = 0
    for client in 0..<4 {
      let got = try FolioRunner.run(["get", "todos", "p\(client)"], in: scratch.path)
      #expect(got.status == 0, "\(got.stderr)")
      let counter = try JSONValue(parsing: got.stdout)["counter"]?.intValue ?? 0
      // Every acknowledged write is there; one whose reply the kill cut
      // off may be there too.
      #expect(counter >= 10 + acked[client] && counter <= 11 + acked[client], "\(got.stdout)")
      ops += counter
    }
    #expect(journalSize() == 0)
    #expect(try FolioRunner.run(["fsck"], in: scratch.path).status == 0)
    let lines = try FolioRunner.shellOutput("cat .folio/ops/*.ndjson | grep -c counter", in: scratch.path)
    #expect(lines.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(ops)")
  }
}
