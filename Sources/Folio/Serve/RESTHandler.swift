import Synchronization

/// Answers Firebase Realtime Database REST requests from a store: the JSON
/// tree is tables → documents → fields, reads go through Folio's queries,
/// and every write is one ``Store/write(_:)`` transaction, so the op log,
/// live queries, `folio watch` and sync see it as any other.
final class RESTHandler: Sendable {
  let options: ServeOptions
  let streams: StreamRegistry
  /// Concurrent writes share transactions (group commit).
  private let batcher = WriteBatcher()
  /// The store as opened on the current `folio.yaml`; replaced when it
  /// changes (``RESTServer/reload()``).
  private let current: Mutex<Store>
  /// The token requests must carry; nil lets every request in. It changes
  /// when the token file does.
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

  /// The reply to `request`; never throws: every failure is an HTTP status.
  func handle(_ request: HTTPRequest) -> HTTPReply {
    var request = request
    // Firebase lets clients that cannot send PATCH or DELETE tunnel them.
    if request.method == "POST", let override = request.header("x-http-method-override") {
      request.method = override.uppercased()
    }
    if request.method == "OPTIONS" {
      return .body(status: 204, headers: [], bytes: [])
    }
    if request.rawPath == "/" || request.rawPath.isEmpty {
      // The page holds no data, so it needs no token: it asks for one when
      // the API answers 401.
      if request.method == "GET" || request.method == "HEAD",
        request.header("accept").map({ $0.contains("text/html") || $0.contains("*/*") }) ?? true
      {
        return .body(
          status: 200,
          headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")],
          bytes: WebPage.bytes)
      }
      return .error(404, "paths end with .json, as in /todos/k1.json")
    }
    guard authorized(request) else { return .error(401, "Unauthorized request.") }
    do {
      if request.rawPath == "/.info/tables.json" && (request.method == "GET" || request.method == "HEAD") {
        return shaped(.json(200, try tablesInfo()), request)
      }
      let path = try RESTPath(parsing: request.rawPath)
      if let pk = path.pk { try PrimaryKey.validate(pk) }
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

  // MARK: Auth

  /// Without a token every request is let in (the server is then bound to
  /// loopback). With one, `Authorization: Bearer T` or `?auth=T` must carry it.
  private func authorized(_ request: HTTPRequest) -> Bool {
    Self.admits(token: token, credential: Self.credential(of: request))
  }

  /// Whether `credential` gets in under `token`. An empty token (a token
  /// file emptied on a network host) lets no one in.
  static func admits(token: String?, credential: String?) -> Bool {
    guard let token else { return true }
    guard let credential, !token.isEmpty else { return false }
    return constantTimeEqual(credential, token)
  }

  /// The token a request carries: `Authorization: Bearer T`, else `?auth=T`.
  static func credential(of request: HTTPRequest) -> String? {
    if let header = request.header("authorization"), header.hasPrefix("Bearer ") {
      return String(header.dropFirst(7))
    }
    return request.query["auth"]
  }

  /// Equality whose time depends only on the lengths, so a client cannot
  /// find the token a byte at a time by timing replies.
  static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
    for i in 0..<max(x.count, y.count) {
      difference |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
    }
    return difference == 0 && x.count == y.count
  }

  // MARK: Reading

  /// `/.info/tables.json`, in Firebase's reserved `.info` space: each table
  /// with its document count, key column and order keys, for the page.
  private func tablesInfo() throws -> JSONValue {
    let store = self.store
    var out = JSONObject()
    for table in store.config.tables {
      out[table.name] = .object(
        JSONObject([
          ("count", .number(String(try store.collection(table.name).count()))),
          ("key", .string(table.key)),
          ("order", .array(table.order.map { .string($0) })),
        ]))
    }
    return .object(out)
  }

  private func get(_ path: RESTPath, _ request: HTTPRequest) throws -> HTTPReply {
    let query = try RESTQuery(request.query)
    let shallow = request.query["shallow"] == "true"
    if shallow && !query.isEmpty {
      throw RESTError(400, "Mixing shallow with other query parameters is not allowed")
    }
    if !query.isEmpty && path.segments.count != 1 {
      throw RESTError(400, "orderBy and its filters apply to a table, as in /todos.json")
    }
    if let format = request.query["format"], format != "export" {
      throw RESTError(400, "format must be \"export\" (got \(format))")
    }
    // format=export is Firebase's form with priorities (`.priority`, and
    // `.value` beside it for a primitive). Folio keeps no priorities, so
    // the export form of every value is the value itself.
    var value = try read(path, query: query.isEmpty ? nil : query)
    if shallow, case .object(let object) = value {
      value = .object(JSONObject(object.keys.map { ($0, JSONValue.bool(true)) }))
    }
    var headers: [(String, String)] = []
    if request.header("x-firebase-etag") == "true" { headers.append(("ETag", Self.etag(value))) }
    return .json(200, value, headers: headers)
  }

  /// The value at `path` now: null where nothing is, as Firebase answers
  /// for a missing path (an unknown table included).
  func read(_ path: RESTPath, query: RESTQuery? = nil) throws -> JSONValue {
    guard let table = path.table else {
      var out = JSONObject()
      for table in store.config.tables {
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
      for document in documents { out[document.pk] = document.json }
      return out.isEmpty && query == nil ? .null : .object(out)
    }
    guard let document = try collection.findByID(pk).exec() else { return .null }
    guard let field = path.field else { return document.json }
    return document.value.value(at: field) ?? .null
  }

  /// The value at `path` as the transaction sees it (its own writes
  /// included). A table or the store is read from the files: the store
  /// lock is held, so no other writer changes them meanwhile.
  private func read(_ path: RESTPath, in transaction: WriteTransaction) throws -> JSONValue {
    guard let table = path.table, let pk = path.pk else { return try read(path) }
    guard let document = try transaction.get(table: table, pk: pk) else { return .null }
    guard let field = path.field else { return document.json }
    return document.value.value(at: field) ?? .null
  }

  /// Firebase's ETag: a hash of the canonical bytes of the value at a path.
  static func etag(_ value: JSONValue) -> String {
    var sha = SHA1()
    sha.update(value.canonicalBytes())
    return sha.finish().map { byte in
      let digits = Array("0123456789abcdef".utf8)
      return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
    }.joined()
  }

  // MARK: Writing

  private func write(_ path: RESTPath, _ request: HTTPRequest) throws -> HTTPReply {
    let body: JSONValue
    if request.method == "DELETE" {
      body = .null
    } else {
      do {
        body = try JSONValue(parsing: request.body, file: "request body")
      } catch let error as FolioError {
        throw RESTError(400, "Invalid data; couldn't parse JSON object, array, or value. \(error)")
      }
    }
    if let table = path.table { _ = try store.table(named: table) }
    let now = Clock.nowMilliseconds()
    let ifMatch = request.header("if-match")
    // Firebase takes if-match on PUT and DELETE; Folio also on PATCH (the
    // ETag of the value at the request's path), so that an editor can save
    // only the columns changed, and only over what it read.
    if ifMatch != nil && request.method == "POST" {
      throw RESTError(400, "if-match applies to PUT, PATCH and DELETE")
    }
    // PATCH's targets, checked before anything is written.
    var targets: [(RESTPath, JSONValue)] = []
    if request.method == "PATCH" {
      guard case .object(let members) = body else {
        throw RESTError(400, "PATCH takes an object of paths to values, not \(body.kindName)")
      }
      targets = try members.map { member throws(RESTError) in
        (try path.appending(member.key), member.value)
      }
      try Self.checkDisjoint(targets.map(\.0))
      for (target, _) in targets {
        guard target.segments.count >= 1 else { throw RESTError(400, "PATCH needs a key under the path") }
        if target.table != path.table, let table = target.table { _ = try store.table(named: table) }
      }
    }
    // A write that reads or replaces a whole table (or the store) reads the
    // files, which do not show a shared transaction's earlier writes: it
    // gets a transaction of its own.
    let alone =
      request.method == "PATCH"
      ? targets.contains { $0.0.segments.count < 2 } || (ifMatch != nil && path.segments.count < 2)
      : request.method != "POST" && path.segments.count < 2
    let method = request.method
    let patchTargets = targets
    return try batcher.write(store, alone: alone) { transaction -> HTTPReply in
      if let ifMatch {
        let current = try self.read(path, in: transaction)
        let etag = Self.etag(current)
        if etag != ifMatch {
          var error = RESTError(412, "ETag mismatch")
          error.body = current
          error.headers = [("ETag", etag)]
          throw error
        }
      }
      switch method {
      case "PUT", "DELETE":
        guard !path.segments.isEmpty else {
          throw RESTError(400, "write a table or a path below it, not the whole store")
        }
        try self.set(path, try ServerValues(body, now: now), in: transaction)
        return .json(200, method == "DELETE" ? .null : try self.read(path, in: transaction))
      case "PATCH":
        var echo = JSONObject()
        for (target, value) in patchTargets {
          try self.set(target, try ServerValues(value, now: now), in: transaction)
        }
        if case .object(let members) = body {
          for (key, _) in members {
            echo[key] = try self.read(try path.appending(key), in: transaction)
          }
        }
        return .json(200, .object(echo))
      default:  // POST: push a new child with a generated, time-sortable key
        guard !path.segments.isEmpty else { throw RESTError(400, "POST to a table, as in /todos.json") }
        let pk = PrimaryKey.generate()
        try self.set(
          RESTPath(segments: path.segments + [pk]), try ServerValues(body, now: now), in: transaction)
        return .json(200, ["name": .string(pk)])
      }
    }
  }

  /// Firebase refuses a multi-path update whose paths overlap, since the
  /// result would depend on the order applied.
  private static func checkDisjoint(_ paths: [RESTPath]) throws(RESTError) {
    let sorted = paths.map(\.segments).sorted { $0.lexicographicallyPrecedes($1) }
    for (a, b) in zip(sorted, sorted.dropFirst()) where b.starts(with: a) {
      throw RESTError(400, "Path /\(a.joined(separator: "/")) is an ancestor of /\(b.joined(separator: "/"))")
    }
  }

  /// Writes `values` at `path`: a table is replaced document by document,
  /// a document replaced (recorded as its diff, so it merges column by
  /// column), a field assigned; null removes. Increments become Folio's
  /// `increment` transform on top.
  private func set(_ path: RESTPath, _ values: ServerValues, in transaction: WriteTransaction) throws {
    let table = path.table!
    guard let pk = path.pk else {
      let documents: JSONObject
      switch values.value {
      case .object(let object)?: documents = object
      case .null?, nil: documents = JSONObject()
      case let other?: throw RESTError(400, "a table is an object keyed by pk, not \(other.kindName)")
      }
      for existing in try store.collection(table).allPKs() where documents[existing] == nil {
        try transaction.remove(table: table, pk: existing)
      }
      for (pk, document) in documents {
        try PrimaryKey.validate(pk)
        let nested = values.increments.filter { $0.path.first == pk }.map {
          (Array($0.path.dropFirst()), $0.by)
        }
        try set(
          RESTPath(segments: [table, pk]), ServerValues(value: document, increments: nested), in: transaction)
      }
      return
    }
    let current = try transaction.get(table: table, pk: pk)
    guard let field = path.field else {
      if values.value == .null || (values.value == nil && values.increments.isEmpty) {
        try transaction.remove(table: table, pk: pk)
        return
      }
      var document = values.value ?? .object(JSONObject())
      guard case .object(var object) = document else {
        throw RESTError(400, "INVALID_DOCUMENT: a document must be a JSON object, not \(document.kindName)")
      }
      // An increment adds to what is there: keep the current value in the
      // replacement so that the diff does not unset it first.
      for increment in values.increments where !increment.path.isEmpty {
        if let kept = current?.value.value(at: FieldPath(increment.path)) {
          object.setValue(kept, at: FieldPath(increment.path))
        }
      }
      document = .object(object)
      try transaction.put(table: table, pk: pk, document: document)
      try increment(
        values.increments.filter { !$0.path.isEmpty }, under: [], table: table, pk: pk, transaction)
      return
    }
    if current == nil {
      if values.value == .null || values.value == nil && values.increments.isEmpty { return }
      // Firebase creates the parents of a path written to.
      try transaction.put(table: table, pk: pk, document: .object(JSONObject()))
    }
    try transaction.update(table: table, pk: pk) { document in
      guard let document else { return }
      switch values.value {
      case .null?: document[field].remove()
      case var value?:
        if case .object(var object) = value {
          for increment in values.increments where !increment.path.isEmpty {
            if let kept = current?.value.value(at: FieldPath(field.segments + increment.path)) {
              object.setValue(kept, at: FieldPath(increment.path))
            }
          }
          value = .object(object)
        }
        document[field].set(value)
      case nil: break
      }
      for increment in values.increments {
        document[FieldPath(field.segments + increment.path)].increment(by: increment.by)
      }
    }
  }

  private func increment(
    _ increments: [(path: [String], by: DecimalInteger)], under prefix: [String], table: String, pk: String,
    _ transaction: WriteTransaction
  ) throws {
    guard !increments.isEmpty else { return }
    try transaction.update(table: table, pk: pk) { document in
      for increment in increments {
        document?[FieldPath(prefix + increment.path)].increment(by: increment.by)
      }
    }
  }

  // MARK: Streaming

  private func stream(_ path: RESTPath, _ request: HTTPRequest) throws -> HTTPReply {
    let query = try RESTQuery(request.query)
    if !query.isEmpty && path.segments.count != 1 {
      throw RESTError(400, "orderBy and its filters apply to a table, as in /todos.json")
    }
    guard let stream = streams.open(path: path, credential: Self.credential(of: request), options: options)
    else {
      return .error(503, "too many streams open (at most \(options.maxStreams))")
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

extension ServerValues {
  /// Values already split, for the documents of a table write.
  init(value: JSONValue?, increments: [(path: [String], by: DecimalInteger)]) {
    self.value = value
    self.increments = increments
  }
}
