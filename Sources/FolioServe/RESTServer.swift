import FolioCore
import FolioSystem
import Foundation
import Synchronization

/// A Firebase-REST-compatible HTTP server on a store (`folio serve`).
///
/// `/.json` is the whole store, `/todos.json` a table (an object keyed by
/// pk), `/todos/k1.json` a document and `/todos/k1/tags.json` a value in it.
/// GET, PUT, PATCH, POST and DELETE follow Firebase's "Retrieving data" and
/// "Saving data", with its query parameters, server values, ETags and
/// `if-match`; `Accept: text/event-stream` streams `put` and `patch` events
/// from live queries. Every write is one ``Store/write(_:)-3g7od`` transaction.
///
/// While it runs, the server follows two files: `folio.yaml` (a table added
/// is served at once; a stream of a table removed gets `cancel`) and, with
/// ``ServeOptions/tokenFile``, the token file (a new token sends
/// `auth_revoked` to the streams opened with the old one). ``reload()`` reads
/// both again on demand (`folio serve` calls it on SIGHUP).
///
/// ```swift
/// let server = try RESTServer(store: store, options: ServeOptions())
/// try server.start()
/// // …
/// server.stop()
/// ```
public final class RESTServer: Sendable {
  /// The store served: the one given, or the store opened again on a
  /// changed `folio.yaml`.
  public var store: Store { handler.store }
  /// How it listens.
  public let options: ServeOptions
  private let streams = StreamRegistry()
  private let handler: RESTHandler
  private let daemon = Mutex<HTTPDaemon?>(nil)
  private let fileWatch = Mutex<ServeFileWatch?>(nil)
  /// Serializes ``reload()``: the file watch and a signal may call it at once.
  private let reloading = Mutex<Void>(())

  /// A server, not yet listening.
  /// - Throws: `USAGE` for a non-loopback host without a token: anyone on
  ///   the network could then read and write the store, and for an origin
  ///   or host name that cannot be one; `IO` for a token file that does not
  ///   exist or cannot be read. An empty token file lets no one in until it
  ///   holds a token.
  public init(store: Store, options: ServeOptions) throws {
    for origin in options.corsOrigins {
      if let problem = ServeConfig.problem(withOrigin: origin) {
        throw FolioError(.usage, "--cors: " + problem)
      }
    }
    for host in options.allowedHosts {
      if let problem = ServeConfig.problem(withHost: host) {
        throw FolioError(.usage, "--allow-host: " + problem)
      }
    }
    var token = options.token
    if let file = options.tokenFile {
      // Fails closed: an empty file is a token no credential matches.
      token = try Self.readToken(file) ?? ""
    } else if !options.isLoopback && (token ?? "").isEmpty {
      throw FolioError(
        .usage,
        "serving on '\(options.host)' needs a token (--token, --token-file or FOLIO_SERVE_TOKEN): only loopback may go without"
      )
    }
    self.options = options
    handler = RESTHandler(store: store, token: token, options: options, streams: streams)
  }

  /// The token in `file`: its text without surrounding white space; nil
  /// for an empty file.
  static func readToken(_ file: String) throws -> String? {
    guard let bytes = try FileSystem.read(file) else {
      throw FolioError(.io, "the token file \(file) does not exist", path: file)
    }
    let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return token.isEmpty ? nil : token
  }

  /// Reads `folio.yaml` and the token file again.
  ///
  /// - A changed `folio.yaml` opens the store again on it: new requests see
  ///   its tables; a stream of a table that left gets `cancel`; a stream of
  ///   the whole store gets a put of null at the table that left and the
  ///   first value of one that joined. A config that does not parse is
  ///   reported and the server goes on with the one it has.
  /// - A changed token lets in only requests that carry the new one; each
  ///   stream opened with a credential the new token refuses gets
  ///   `auth_revoked` and ends. A token file that is empty, cannot be read
  ///   or is gone lets no one in (401) until it holds a token again: it
  ///   fails closed, whatever the host.
  /// - Returns: what changed, one line each, for the log.
  @discardableResult
  public func reload() -> [String] {
    reloading.withLock { _ in
      var said: [String] = []
      let old = handler.store
      do {
        let config = try Config(contentsOf: URL(fileURLWithPath: old.rootPath + "/" + Config.fileName))
        if config != old.config {
          let reopened = try Store(rootPath: old.rootPath, wiring: old.wiring)
          handler.store = reopened
          for stream in streams.all { stream.tablesChanged(to: reopened) }
          said.append("folio.yaml changed: serving tables \(reopened.config.tables.map(\.name))")
        }
      } catch {
        said.append("warning: folio.yaml changed but cannot be used, serving the tables as before: \(error)")
      }
      if let file = options.tokenFile {
        let token: String
        do {
          token = try Self.readToken(file) ?? ""
        } catch {
          said.append("warning: cannot read the token file, so every request gets 401 until it can: \(error)")
          token = ""
        }
        if token != handler.token {
          handler.token = token
          for stream in streams.all
          where !RESTHandler.admits(token: token, credential: stream.credential) {
            stream.revoke()
          }
          said.append(
            token.isEmpty
              ? "the token file is empty or gone: every request gets 401 until it holds a token"
              : "the token changed")
        }
      }
      return said
    }
  }

  /// Starts listening; requests are served on libmicrohttpd's threads.
  ///
  /// Raises the process's soft limit on open files to its hard limit (each
  /// stream holds a socket and an eventfd), and says on stderr when even
  /// that cannot hold ``ServeOptions/maxStreams`` streams.
  /// - Throws: `IO` if the port cannot be bound.
  public func start() throws {
    let handler = self.handler
    let capacity = options.connectionCapacity
    let descriptors = DescriptorLimit.raise()
    if descriptors < DescriptorLimit.needed(streams: options.maxStreams, capacity: capacity) {
      // Said even with `quiet`: past this many, streams get 503 for want of
      // descriptors, and the operator can fix it.
      let held = DescriptorLimit.streamsHeld(by: descriptors, streams: options.maxStreams, capacity: capacity)
      ServeLog.write(
        "folio serve: warning: the file descriptor limit is \(descriptors) (ulimit -n), which holds about \(held) of the \(options.maxStreams) streams --max-streams allows; raise the hard limit to hold them all"
      )
    }
    let limits = HTTPDaemon.Limits(
      connections: capacity, connectionsPerAddress: options.maxConnectionsPerAddress,
      timeoutSeconds: options.timeoutSeconds)
    let started = try HTTPDaemon(
      host: options.bareHost, port: options.port, maxBodyBytes: options.maxBodyBytes, limits: limits,
      log: options.quiet ? nil : ServeLog.write, admit: { handler.admit($0) }, handler: { handler.handle($0) }
    )
    daemon.withLock { $0 = started }
    // Said even with `quiet`: rare, and the operator needs to know.
    let log: @Sendable (String) -> Void = ServeLog.write
    let watch = try ServeFileWatch(
      files: [store.rootPath + "/" + Config.fileName] + (options.tokenFile.map { [$0] } ?? [])
    ) { [weak self] _ in
      guard let self else { return }
      for line in self.reload() { log("folio serve: " + line) }
    }
    fileWatch.withLock { $0 = watch }
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
    fileWatch.withLock { watch in
      watch?.stop()
      watch = nil
    }
    running.quiesce()
    streams.closeAll()
    running.stop()
    // The last writes' files, flushed now rather than at the next open.
    try? handler.store.checkpointDeferredWrites()
  }

  deinit { stop() }
}
