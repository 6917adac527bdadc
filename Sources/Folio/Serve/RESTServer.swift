import Synchronization

/// A Firebase-REST-compatible HTTP server on a store (`folio serve`).
///
/// `/.json` is the whole store, `/todos.json` a table (an object keyed by
/// pk), `/todos/k1.json` a document and `/todos/k1/tags.json` a value in it.
/// GET, PUT, PATCH, POST and DELETE follow Firebase's "Retrieving data" and
/// "Saving data", with its query parameters, server values, ETags and
/// `if-match`; `Accept: text/event-stream` streams `put` and `patch` events
/// from live queries. Every write is one ``Store/write(_:)`` transaction.
///
/// ```swift
/// let server = try RESTServer(store: store, options: ServeOptions())
/// try server.start()
/// // …
/// server.stop()
/// ```
public final class RESTServer: Sendable {
  /// The store served.
  public let store: Store
  /// How it listens.
  public let options: ServeOptions
  private let streams = StreamRegistry()
  private let handler: RESTHandler
  private let daemon = Mutex<HTTPDaemon?>(nil)

  /// A server, not yet listening.
  /// - Throws: `USAGE` for a non-loopback host without a token: anyone on
  ///   the network could then read and write the store.
  public init(store: Store, options: ServeOptions) throws {
    if !options.isLoopback && (options.token ?? "").isEmpty {
      throw FolioError(
        .usage,
        "serving on '\(options.host)' needs a token (--token or FOLIO_SERVE_TOKEN): only loopback may go without"
      )
    }
    self.store = store
    self.options = options
    handler = RESTHandler(store: store, options: options, streams: streams)
  }

  /// Starts listening; requests are served on libmicrohttpd's threads.
  /// - Throws: `IO` if the port cannot be bound.
  public func start() throws {
    let handler = self.handler
    let started = try HTTPDaemon(
      host: options.host, port: options.port, maxBodyBytes: options.maxBodyBytes,
      // Streams hold a connection each; leave room for requests beside them.
      maxConnections: options.maxStreams + 256, log: options.quiet ? nil : ServeLog.write
    ) { request in handler.handle(request) }
    daemon.withLock { $0 = started }
  }

  /// Stops accepting connections, ends every stream, lets requests in
  /// flight finish, then returns. Safe to call twice.
  public func stop() {
    guard
      let running = daemon.withLock({ daemon in
        defer { daemon = nil }
        return daemon
      })
    else { return }
    running.quiesce()
    streams.closeAll()
    running.stop()
  }

  deinit { stop() }
}
