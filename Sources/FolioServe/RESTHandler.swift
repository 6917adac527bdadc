import FolioCore
import FolioJSON
import FolioSystem
import Synchronization

/// Answers Firebase Realtime Database REST requests from a store: the JSON
/// tree is tables → documents → fields, reads go through Folio's queries,
/// and every write is one ``Store/write(_:)`` transaction, so the op log,
/// live queries, `folio watch` and sync see it as any other.
final class RESTHandler: Sendable {
  let options: ServeOptions
  let streams: StreamRegistry
  /// Concurrent writes share transactions (group commit).
  let batcher = WriteBatcher()
  /// The store as opened on the current `folio.yaml`; replaced when it
  /// changes (``RESTServer/reload()``).
  private let current: Mutex<Store>
  /// The token requests must carry; nil lets every request in, and an
  /// empty one none (a token file that is empty, unreadable or gone). It
  /// changes when the token file does.
  private let currentToken: Mutex<String?>

  init(store: Store, token: String?, options: ServeOptions, streams: StreamRegistry) {
    current = Mutex(store)
    currentToken = Mutex(token)
    self.options = options
    self.streams = streams
  }

  /// The store requests are served from now.
  var store: Store {
    get { current.withLock { $0 } }
    set { current.withLock { $0 = newValue } }
  }

  /// The token requests must carry now.
  var token: String? {
    get { currentToken.withLock { $0 } }
    set { currentToken.withLock { $0 = newValue } }
  }

  /// The reply to an admitted request (see ``admit(_:)``); never throws:
  /// every failure is an HTTP status.
  func handle(_ request: HTTPRequest) -> HTTPReply {
    withCORS(reply(to: request), for: request)
  }

  private func reply(to request: HTTPRequest) -> HTTPReply {
    var request = request
    // Firebase lets clients that cannot send PATCH or DELETE tunnel them,
    // as a header or as a query parameter.
    if request.method == "POST",
      let override = request.header("x-http-method-override") ?? request.query["x-http-method-override"]
    {
      request.method = override.uppercased()
    }
    if request.rawPath == "/" || request.rawPath.isEmpty {
      if isPage(request),
        request.header("accept").map({ $0.contains("text/html") || $0.contains("*/*") }) ?? true
      {
        return .body(
          status: 200,
          headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")],
          bytes: WebPage.bytes)
      }
      return .error(404, "paths end with .json, as in /todos/k1.json")
    }
    // Checked again with the body in: the token may have changed while it
    // was read.
    guard authorized(request) else { return .error(401, "Unauthorized request.") }
    do {
      if request.rawPath == "/.info/tables.json" && (request.method == "GET" || request.method == "HEAD") {
        return shaped(.json(200, try tablesInfo()), request)
      }
      if Self.historyPrefixes.contains(where: request.rawPath.hasPrefix) {
        return shaped(try history(request.rawPath, method: request.method), request)
      }
      if Self.browsePrefixes.contains(where: request.rawPath.hasPrefix) {
        return shaped(try browse(request), request)
      }
      if Self.exportPrefixes.contains(where: request.rawPath.hasPrefix) {
        return shaped(try exportOrFacets(request), request)
      }
      let path = try RESTPath(parsing: request.rawPath)
      if let pk = path.pk { try PrimaryKey.validate(pk) }
      if path.segments.count > RESTKeys.maxDepth {
        throw RESTError(
          400, "the path is \(path.segments.count) keys deep, deeper than the limit of \(RESTKeys.maxDepth)")
      }
      try Self.checkCommonParameters(request.query)
      let reply: HTTPReply
      switch request.method {
      case "GET", "HEAD":
        if request.header("accept")?.contains("text/event-stream") == true {
          return try stream(path, request)
        }
        reply = try get(path, request)
      case "PUT", "PATCH", "POST", "DELETE":
        reply = try write(path, request)
      default:
        return .error(405, "method \(request.method) is not supported")
      }
      return shaped(reply, request)
    } catch let error as RESTError {
      return error.reply
    } catch let error as FolioError {
      return RESTError(error).reply
    } catch {
      return .error(500, "\(error)")
    }
  }

  /// Firebase's parameters that apply to any request: `print` is `pretty`
  /// or `silent`; `timeout` is a duration in `ms`, `s` or `min` of at most
  /// 15 minutes (Folio's reads finish well within any); `writeSizeLimit` is
  /// `tiny`, `small`, `medium`, `large` or `unlimited` (Folio takes writes
  /// of any size up to `--max-body`). Any other value is 400, not ignored.
  static func checkCommonParameters(_ query: [String: String]) throws(RESTError) {
    if let print = query["print"], print != "pretty" && print != "silent" {
      throw RESTError(400, "print must be \"pretty\" or \"silent\", not \"\(print)\"")
    }
    if let timeout = query["timeout"] {
      let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1)]
      let parsed = units.lazy.compactMap { unit, seconds -> Double? in
        guard timeout.hasSuffix(unit), let amount = Double(timeout.dropLast(unit.count)), amount > 0 else {
          return nil
        }
        return amount * seconds
      }.first
      guard let parsed, parsed <= 15 * 60 else {
        throw RESTError(
          400, "timeout must be a duration such as 500ms, 3s or 2min, at most 15min, not \"\(timeout)\"")
      }
    }
    if let limit = query["writeSizeLimit"],
      !["tiny", "small", "medium", "large", "unlimited"].contains(limit)
    {
      throw RESTError(
        400, "writeSizeLimit must be tiny, small, medium, large or unlimited, not \"\(limit)\"")
    }
  }

  /// `print=silent` and `print=pretty` applied to a successful reply.
  private func shaped(_ reply: HTTPReply, _ request: HTTPRequest) -> HTTPReply {
    guard case .body(let status, let headers, let bytes) = reply, (200..<300).contains(status) else {
      return reply
    }
    switch request.query["print"] {
    case "silent":
      return .body(status: 204, headers: headers.filter { $0.0 != "Content-Type" }, bytes: [])
    case "pretty":
      guard let value = try? JSONValue(parsing: bytes) else { return reply }
      return .body(status: status, headers: headers, bytes: value.canonicalBytes())
    default:
      return reply
    }
  }

  // MARK: Reading

  /// `/.info/tables.json`, in Firebase's reserved `.info` space: each table
  /// with its document count, key column, order keys, indexed paths, the
  /// kinds of its counter and set columns, and the top-level properties of
  /// its JSON Schema (the page's columns), for the page.
  private func tablesInfo() throws -> JSONValue {
    let store = self.store
    var out = JSONObject()
    for table in store.heldTables {
      var info = JSONObject([
        ("count", .number(String(try store.collection(table.name).count()))),
        ("key", table.key.map { .string($0) } ?? .null),
        ("order", .array(table.order.map { .string($0) })),
        ("indexes", .array(table.indexedPaths.map { .string($0) })),
        (
          "kinds",
          .object(
            JSONObject(table.columns.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.rawValue)) }))
        ),
      ])
      if let schema = table.schema, let properties = (try? JSONValue(parsing: schema.source))?["properties"],
        case .object(let members) = properties
      {
        info["columns"] = .array(members.keys.map { .string($0) })
      }
      out[table.name] = .object(info)
    }
    return .object(out)
  }

  private func get(_ path: RESTPath, _ request: HTTPRequest) throws -> HTTPReply {
    let query = try RESTQuery(request.query)
    let shallow = request.query["shallow"] == "true"
    if shallow && !query.isEmpty {
      throw RESTError(400, "Mixing shallow with other query parameters is not allowed")
    }
    if !query.isEmpty && path.table == nil {
      throw RESTError(
        400, "orderBy and its filters apply to a table or a value in a document, as in /todos.json")
    }
    if let format = request.query["format"], format != "export" {
      throw RESTError(400, "format must be \"export\" (got \(format))")
    }
    // format=export is Firebase's form with priorities (`.priority`, and
    // `.value` beside it for a primitive). Folio keeps no priorities, so
    // the export form of every value is the value itself.
    var value = try read(path, query: query.isEmpty ? nil : query)
    // Shallow: each child of an object or an array (Firebase's arrays are
    // objects keyed by index) is `true`; a primitive is itself.
    if shallow, case .object(let object) = value {
      value = .object(JSONObject(object.keys.map { ($0, JSONValue.bool(true)) }))
    } else if shallow, case .array(let elements) = value {
      value = .object(
        JSONObject(
          elements.indices.filter { !elements[$0].isNull }.map { (String($0), JSONValue.bool(true)) }))
    }
    var headers: [(String, String)] = []
    // `if-none-match` asks for the value only when it changed, as the
    // SDKs' get-if-changed does: 304 and no body when it did not.
    let ifNoneMatch = request.header("if-none-match")
    if request.header("x-firebase-etag") == "true" || ifNoneMatch != nil {
      let etag = Self.etag(value)
      if etag == ifNoneMatch { return .body(status: 304, headers: [("ETag", etag)], bytes: []) }
      headers.append(("ETag", etag))
    }
    return .json(200, value, headers: headers)
  }

  /// The value at `path` now: null where nothing is, as Firebase answers
  /// for a missing path (an unknown table included).
  func read(_ path: RESTPath, query: RESTQuery? = nil) throws -> JSONValue {
    guard let table = path.table else {
      var out = JSONObject()
      // A partial replica serves the tables it holds.
      for table in store.heldTables {
        let value = try read(RESTPath(segments: [table.name]))
        if !value.isNull { out[table.name] = value }
      }
      return out.isEmpty ? .null : .object(out)
    }
    guard store.config.table(named: table) != nil else { return .null }
    let collection = store.collection(table)
    guard let pk = path.pk else {
      var out = JSONObject()
      let documents = try (query ?? RESTQuery([:])).query(on: collection).get()
      for document in documents { out[document.pk] = FirebaseArrays.shaped(document) }
      return out.isEmpty && query == nil ? .null : .object(out)
    }
    var value = JSONValue.null
    if let document = try collection.findByID(pk).exec() {
      value = path.field.map { document.value.childValue(at: $0) ?? .null } ?? document.json
    }
    // A query below a table, as Firebase allows anywhere.
    if let query { return try query.select(from: value, checkingWith: collection) }
    return FirebaseArrays.shaped(value)
  }

  /// The value at `path` as the transaction sees it (its own writes
  /// included). A table or the store is read from the files: the store
  /// lock is held, so no other writer changes them meanwhile.
  func read(_ path: RESTPath, in transaction: WriteTransaction) throws -> JSONValue {
    guard let table = path.table, let pk = path.pk else { return try read(path) }
    guard let document = try transaction.get(table: table, pk: pk) else { return .null }
    guard let field = path.field else { return FirebaseArrays.shaped(document) }
    return FirebaseArrays.shaped(document.value.childValue(at: field) ?? .null)
  }

  /// Firebase's ETag: a hash of the canonical bytes of the value at a path.
  static func etag(_ value: JSONValue) -> String {
    var sha = SHA1()
    sha.update(value.canonicalBytes())
    return SHA1.hex(sha.finish())
  }

  // MARK: Streaming

  private func stream(_ path: RESTPath, _ request: HTTPRequest) throws -> HTTPReply {
    let query = try RESTQuery(request.query)
    if !query.isEmpty && path.segments.count != 1 {
      throw RESTError(400, "orderBy and its filters apply to a table, as in /todos.json")
    }
    guard let stream = streams.open(path: path, credential: Self.credential(of: request), options: options)
    else {
      return .error(503, "too many streams open (at most \(options.maxStreams)), or no file descriptor left")
    }
    do {
      try stream.follow(query: query.isEmpty ? nil : query, store: store)
    } catch {
      stream.finish()
      throw error
    }
    return .stream(stream)
  }
}
