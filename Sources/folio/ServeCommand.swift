import Dispatch
import Folio
import Foundation
import Glibc

struct ServeCommand: Command {
  static let name = "serve"
  static let abstract =
    "Serve the store over HTTP as a Firebase Realtime Database REST API, with live streams."
  static let usage = "folio serve [--port PORT] [--host HOST] [--token TOKEN] [--quiet]"
  static let details = """
    OPTIONS:
      --port PORT      The TCP port (default 8471).
      --host HOST      The IPv4 address to bind (default 127.0.0.1). Any address but loopback
                       needs a token.
      --token TOKEN    Requests must carry it, as 'Authorization: Bearer TOKEN' or '?auth=TOKEN';
                       others get 401. Default: $FOLIO_SERVE_TOKEN; none on loopback lets every
                       request in.
      --quiet          No line per request on stderr.

    The JSON tree is tables, documents and fields: /.json is the whole store, /todos.json a
    table (an object keyed by pk), /todos/k1.json a document, /todos/k1/tags.json a value in it.
    GET (print=pretty|silent, shallow=true, orderBy="$key"|"$value"|"child/path" with
    startAt, endAt, equalTo, limitToFirst, limitToLast as JSON), PUT, PATCH (a multi-path
    update, as one transaction), POST ({"name": generated pk}) and DELETE work as in
    Firebase, with {".sv": "timestamp"}, {".sv": {"increment": n}} (Folio's increment
    transform), 'X-Firebase-ETag: true' and 'if-match' compare-and-set. 'Accept:
    text/event-stream' streams put and patch events, whoever changes the files.
    Request bodies are limited to 16 MB (413). Runs until SIGINT or SIGTERM, then ends the
    streams, finishes the requests in flight and exits 0.
    """

  var options = ServeOptions()

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: ["--port", "--host", "--token"], flags: ["--quiet"])
    try parsed.expectPositionals(0...0)
    if let text = parsed.value("--port") {
      guard let port = Int(text), (1...65535).contains(port) else {
        throw UsageError("--port must be a number from 1 to 65535, not '\(text)'")
      }
      options.port = port
    }
    if let host = parsed.value("--host") { options.host = host }
    options.token = parsed.value("--token") ?? ProcessInfo.processInfo.environment["FOLIO_SERVE_TOKEN"]
    if options.token?.isEmpty == true { options.token = nil }
    options.quiet = parsed.flag("--quiet")
    if !options.isLoopback && options.token == nil {
      throw UsageError(
        "serving on '\(options.host)' needs a token (--token or FOLIO_SERVE_TOKEN): only loopback may go without"
      )
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let server = try RESTServer(store: store, options: options)
    // Signals are taken before the server says it listens: a SIGTERM sent
    // as soon as that line appears must stop it, not be lost.
    let interrupts = try InterruptSignals()
    try server.start()
    Output.error("folio serve: listening on http://\(options.host):\(options.port)/")
    interrupts.wait()
    server.stop()
    return 0
  }
}
