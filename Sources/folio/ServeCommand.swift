import Dispatch
import Folio
import Foundation
import Glibc

struct ServeCommand: Command {
  static let name = "serve"
  var runsUntilStopped: Bool { true }
  static let abstract =
    "Serve the store over HTTP as a Firebase Realtime Database REST API, with live streams."
  static let usage = """
    folio serve [--port PORT] [--host HOST] [--token TOKEN | --token-file FILE]
                       [--cors ORIGIN]... [--allow-host NAME]... [--timeout SECONDS]
                       [--max-body SIZE] [--max-streams N] [--quiet]
    """
  static let details = """
    OPTIONS:
      --port PORT          The TCP port (default 8471).
      --host HOST          The IPv4 or IPv6 address to bind (default 127.0.0.1; '::1' for IPv6
                           loopback). Any address but loopback needs a token.
      --token TOKEN        Requests must carry it, as 'Authorization: Bearer TOKEN' or
                           '?auth=TOKEN'; others get 401. Default: $FOLIO_SERVE_TOKEN; none on
                           loopback lets every request in.
      --token-file FILE    The token is FILE's text (trimmed). The server reads it again when
                           the file changes, or on SIGHUP; a new token sends 'auth_revoked' to
                           the streams opened with the old one. While the file is empty,
                           unreadable or gone, every request gets 401.
      --cors ORIGIN        Let pages from ORIGIN (exact, as https://app.example.com; repeatable)
                           call the API, with CORS headers. Default: none; a request from any
                           other origin but the server's own page gets 403. Also 'serve: cors:'
                           in folio.yaml.
      --allow-host NAME    Answer to the Host NAME (repeatable; any port), such as the name a
                           reverse proxy forwards. Default: loopback and --host only; any other
                           Host gets 421, which stops DNS rebinding. Also 'serve: allow-host:'.
      --timeout SECONDS    Close a connection that sends nothing for SECONDS (default 60): a
                           header or body sent slowly, an idle keep-alive.
      --max-body SIZE      The largest request body, in bytes or with K, M or G (default 16M);
                           a larger one gets 413 and nothing is written.
      --max-streams N      How many event streams may be open at once (default 256); one more
                           gets 503. The connection limit grows with it (N + 64, at least
                           1024), and the open-files limit is raised to its hard limit.
      --quiet              No line per request, refusal or eviction on stderr.

    The JSON tree is tables, documents and fields: /.json is the whole store, /todos.json a
    table (an object keyed by pk), /todos/k1.json a document, /todos/k1/tags.json a value in it.
    GET (print=pretty|silent, shallow=true, orderBy="$key"|"$value"|"child/path" with
    startAt, endAt, equalTo, limitToFirst, limitToLast as JSON), PUT, PATCH (a multi-path
    update, as one transaction), POST ({"name": generated pk}) and DELETE work as in
    Firebase, with {".sv": "timestamp"}, {".sv": {"increment": n}} (Folio's increment
    transform), 'X-Firebase-ETag: true' and 'if-match' compare-and-set. 'Accept:
    text/event-stream' streams put and patch events, whoever changes the files.
    GET / in a browser is a small page: the tables, their documents live, and an editor.
    A change to folio.yaml takes effect at once: a stream of a table removed gets 'cancel'.
    The token, Host and Origin are checked as soon as the headers are in, before any body is
    read. One address may hold 256 connections that are not streams, and everyone together
    --max-streams + 64 (at least 1024). Past either limit, the connection that has waited
    longest for a request gets 408 and is closed to make room; with none, the new connection
    gets 503. Every refusal gets a JSON error and a log line; none is dropped in silence.
    Runs until SIGINT or SIGTERM, then ends the streams, finishes the requests in flight and
    exits 0.
    """

  var options = ServeOptions()

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments,
      options: [
        "--port", "--host", "--token", "--token-file", "--max-body", "--max-streams", "--cors",
        "--allow-host",
        "--timeout",
      ],
      flags: ["--quiet"], repeatable: ["--cors", "--allow-host"])
    try parsed.expectPositionals(0...0)
    if let text = parsed.value("--port") {
      guard let port = Int(text), (1...65535).contains(port) else {
        throw UsageError("--port must be a number from 1 to 65535, not '\(text)'")
      }
      options.port = port
    }
    if let host = parsed.value("--host") { options.host = host }
    if let file = parsed.value("--token-file") {
      if parsed.value("--token") != nil { throw UsageError("give --token or --token-file, not both") }
      options.tokenFile = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
    } else {
      options.token = parsed.value("--token") ?? ProcessInfo.processInfo.environment["FOLIO_SERVE_TOKEN"]
      if options.token?.isEmpty == true { options.token = nil }
      if !options.isLoopback && options.token == nil {
        throw UsageError(
          "serving on '\(options.host)' needs a token (--token, --token-file or FOLIO_SERVE_TOKEN): only loopback may go without"
        )
      }
    }
    if let text = parsed.value("--max-body") {
      guard let bytes = ByteSize.parse(text) else {
        throw UsageError("--max-body must be a size such as 1048576, 512K or 16M, not '\(text)'")
      }
      options.maxBodyBytes = bytes
    }
    if let text = parsed.value("--max-streams") {
      guard let count = Int(text), (0...100_000).contains(count) else {
        throw UsageError("--max-streams must be a number from 0 to 100000, not '\(text)'")
      }
      options.maxStreams = count
    }
    for origin in parsed.allValues("--cors") {
      if let problem = ServeConfig.problem(withOrigin: origin) { throw UsageError("--cors: " + problem) }
      options.corsOrigins.append(origin)
    }
    for host in parsed.allValues("--allow-host") {
      if let problem = ServeConfig.problem(withHost: host) { throw UsageError("--allow-host: " + problem) }
      options.allowedHosts.append(host)
    }
    if let text = parsed.value("--timeout") {
      guard let seconds = Int(text), (1...86_400).contains(seconds) else {
        throw UsageError("--timeout must be a number of seconds from 1 to 86400, not '\(text)'")
      }
      options.timeoutSeconds = seconds
    }
    options.quiet = parsed.flag("--quiet")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let server = try RESTServer(store: store, options: options)
    // Signals are taken before the server says it listens: a SIGTERM sent
    // as soon as that line appears must stop it, not be lost.
    let interrupts = try InterruptSignals()
    // SIGHUP reads folio.yaml and the token file again, as daemons do.
    signal(SIGHUP, SIG_IGN)
    let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
    hangup.setEventHandler {
      for line in server.reload() { Output.error("folio serve: " + line) }
    }
    hangup.resume()
    try server.start()
    Output.error("folio serve: listening on \(options.url)/")
    interrupts.wait()
    hangup.cancel()
    server.stop()
    return 0
  }
}
