import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem

extension RESTHandler {
  /// One change a write makes: the value (server values split out) to put
  /// at a path.
  struct Target {
    var path: RESTPath
    var values: ServerValues
  }

  /// PUT, PATCH, POST and DELETE. Everything that depends on the body
  /// alone (parsing, Firebase's key rules, server values, how PATCH paths
  /// group by document) is done before the write is queued, so the store
  /// lock is held for the write itself.
  func write(_ path: RESTPath, _ request: HTTPRequest) throws -> HTTPReply {
    let body: JSONValue
    if request.method == "DELETE" {
      body = .null
    } else {
      do {
        body = try RESTKeys.withoutPriorities(JSONValue(parsing: request.body, file: "request body"))
      } catch let error as FolioError {
        throw RESTError(400, "Invalid data; couldn't parse JSON object, array, or value. \(error)")
      }
    }
    if let table = path.table { _ = try store.table(named: table) }
    let ifMatch = request.header("if-match")
    // Firebase takes if-match on PUT and DELETE; Folio also on PATCH (the
    // ETag of the value at the request's path), so that an editor can save
    // only the columns changed, and only over what it read.
    if ifMatch != nil && request.method == "POST" {
      throw RESTError(400, "if-match applies to PUT, PATCH and DELETE")
    }
    let method = request.method
    let targets: [Target]
    switch try writeTargets(method, path: path, body: body) {
    case .keyOnly(let key): return .json(200, ["name": .string(key)])
    case .targets(let found): targets = found
    }
    let plan = WritePlan(targets)
    // A write that reads or replaces a whole table (or the store) reads the
    // files, which do not show a shared transaction's earlier writes: it
    // gets a transaction of its own.
    let alone =
      method == "PATCH"
      ? !plan.tables.isEmpty || (ifMatch != nil && path.segments.count < 2)
      : method != "POST" && path.segments.count < 2
    return try batcher.write(store, alone: alone) { transaction -> HTTPReply in
      if let ifMatch {
        let current = try self.read(path, in: transaction)
        let etag = Self.etag(current)
        // `null_etag` is how the SDKs say "only if nothing is there".
        if etag != ifMatch && !(ifMatch == Self.nullETag && current.isNull) {
          var error = RESTError(412, "ETag mismatch")
          error.body = current
          error.headers = [("ETag", etag)]
          throw error
        }
      }
      try self.apply(plan, in: transaction)
      let reply = try self.reply(
        to: method, path: path, body: body, written: targets, in: transaction)
      // A conditional write answers with the new ETag, for the next one.
      guard ifMatch != nil else { return reply }
      return reply.adding(headers: [("ETag", Self.etag(try self.read(path, in: transaction)))])
    }
  }

  /// What a request writes, worked out from its body alone.
  private enum WriteTargets {
    /// The places and their values, checked against Firebase's key rules.
    case targets([Target])
    /// A POST of "" to a table: a key handed out, nothing written.
    case keyOnly(String)
  }

  /// The places `method` with `body` writes under `path`: each of a PATCH's
  /// paths, the path itself for PUT and DELETE, a new child for POST.
  private func writeTargets(_ method: String, path: RESTPath, body: JSONValue) throws -> WriteTargets {
    let now = SystemClock.nowMilliseconds()
    switch method {
    case "PATCH":
      guard case .object(let members) = body else {
        throw RESTError(400, "PATCH takes an object of paths to values, not \(body.kindName)")
      }
      var targets: [Target] = []
      for (key, value) in members {
        let full = RESTPath(segments: path.segments + (try RESTKeys.patchSegments(key, under: path.segments)))
        try RESTKeys.check(value, at: full.segments)
        if full.table != path.table, let table = full.table { _ = try store.table(named: table) }
        targets.append(Target(path: full, values: try ServerValues(value, now: now)))
      }
      try Self.checkDisjoint(targets.map(\.path))
      return .targets(targets)
    case "PUT", "DELETE":
      guard !path.segments.isEmpty else {
        throw RESTError(400, "write a table or a path below it, not the whole store")
      }
      try RESTKeys.check(body, at: path.segments)
      return .targets([Target(path: path, values: try ServerValues(body, now: now))])
    default:  // POST: push a new child with a generated, time-sortable key
      guard !path.segments.isEmpty else { throw RESTError(400, "POST to a table, as in /todos.json") }
      let child = RESTPath(segments: path.segments + [PrimaryKey.generate()])
      // The SDKs' `push()` with no value posts "" to get a key for a later
      // set. A document is an object, so "" at a table's child cannot be
      // stored: the key is handed out and nothing is written.
      if path.segments.count == 1, body == .string("") { return .keyOnly(child.pk!) }
      try RESTKeys.check(body, at: child.segments)
      return .targets([Target(path: child, values: try ServerValues(body, now: now))])
    }
  }

  /// `if-match: null_etag`: the write applies only where the path holds
  /// nothing.
  static let nullETag = "null_etag"

  /// What a write answers once applied: Firebase echoes the values now at
  /// the paths written, or the new child's name for a POST.
  private func reply(
    to method: String, path: RESTPath, body: JSONValue, written: [Target], in transaction: WriteTransaction
  ) throws -> HTTPReply {
    switch method {
    case "PATCH":
      // Firebase answers a PATCH with the values now at its paths.
      var echo = JSONObject()
      var documents = DocumentCache()
      for (key, target) in zip(body.objectMembers.map(\.key), written) {
        echo[key] = try self.value(
          at: target.path, in: transaction, cache: &documents, written: target.values)
      }
      return .json(200, .object(echo))
    case "POST":
      // The new child's own key, at whatever depth it was pushed.
      return .json(200, ["name": .string(written[0].path.segments.last!)])
    case "DELETE":
      return .json(200, .null)
    default:
      var documents = DocumentCache()
      return .json(
        200, try self.value(at: path, in: transaction, cache: &documents, written: written[0].values))
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

  /// A write's targets by what they replace: whole tables, whole
  /// documents, and fields grouped by their document, so that each document
  /// is read, changed and recorded once however many of its paths a PATCH
  /// names.
  struct WritePlan {
    var tables: [(table: String, values: ServerValues)] = []
    var documents: [(table: String, pk: String, values: ServerValues)] = []
    /// Per document, in first-seen order, its fields' paths and values.
    var fields: [(table: String, pk: String, changes: [(field: [String], values: ServerValues)])] = []

    init(_ targets: [Target]) {
      var fieldGroups: [DocumentAddress: Int] = [:]
      for target in targets {
        let segments = target.path.segments
        switch segments.count {
        case 1: tables.append((segments[0], target.values))
        case 2: documents.append((segments[0], segments[1], target.values))
        default:
          let key = DocumentAddress(table: segments[0], pk: segments[1])
          let field = Array(segments[2...])
          if let index = fieldGroups[key] {
            fields[index].changes.append((field, target.values))
          } else {
            fieldGroups[key] = fields.count
            fields.append((segments[0], segments[1], [(field, target.values)]))
          }
        }
      }
    }
  }

  private func apply(_ plan: WritePlan, in transaction: WriteTransaction) throws {
    for (table, values) in plan.tables { try setTable(table, values, in: transaction) }
    for (table, pk, values) in plan.documents {
      try PrimaryKey.validate(pk)
      try setDocument(table: table, pk: pk, values, in: transaction)
    }
    for (table, pk, changes) in plan.fields {
      try PrimaryKey.validate(pk)
      try setFields(table: table, pk: pk, changes, in: transaction)
    }
  }

  /// Replaces a table document by document; null or `{}` empties it.
  private func setTable(_ table: String, _ values: ServerValues, in transaction: WriteTransaction) throws {
    let documents: JSONObject
    switch values.value {
    case .object(let object)?: documents = object
    case .null?, nil: documents = JSONObject()
    case let other?: throw RESTError(400, "a table is an object keyed by pk, not \(other.kindName)")
    }
    for existing in try store.collection(table).allPKs() where documents[existing] == nil {
      try transaction.remove(table: table, pk: existing)
    }
    var increments: [String: [ServerValues.Increment]] = [:]
    for increment in values.increments where !increment.path.isEmpty {
      increments[increment.path[0], default: []].append((Array(increment.path.dropFirst()), increment.by))
    }
    for (pk, document) in documents {
      try PrimaryKey.validate(pk)
      try setDocument(
        table: table, pk: pk, ServerValues(value: document, increments: increments[pk] ?? []), in: transaction
      )
    }
  }

  /// Replaces a document (recorded as its diff, so it merges column by
  /// column); null removes it. Increments become Folio's `increment`
  /// transform on top.
  private func setDocument(
    table: String, pk: String, _ values: ServerValues, in transaction: WriteTransaction
  )
    throws
  {
    if values.value == .null || (values.value == nil && values.increments.isEmpty) {
      try transaction.remove(table: table, pk: pk)
      return
    }
    guard case .object(var object) = values.value ?? .object(JSONObject()) else {
      throw RESTError(
        400, "INVALID_DOCUMENT: a document must be a JSON object, not \(values.value!.kindName)")
    }
    let increments = values.increments.filter { !$0.path.isEmpty }
    // `{}` holds nothing, which Firebase reads as absent.
    if object.isEmpty && increments.isEmpty {
      try transaction.remove(table: table, pk: pk)
      return
    }
    if !increments.isEmpty {
      // An increment adds to what is there: keep the current value in the
      // replacement so that the diff does not unset it first.
      let current = try transaction.get(table: table, pk: pk)
      for increment in increments {
        if let kept = current?.value.value(at: FieldPath(increment.path)) {
          object.setValue(kept, at: FieldPath(increment.path))
        }
      }
    }
    try transaction.put(table: table, pk: pk, document: .object(object))
    try self.increment(increments, table: table, pk: pk, transaction)
  }

  /// Sets (or, with null, removes) fields of one document: the new
  /// document is built in one pass over the changes and recorded as one
  /// diff, so the cost is linear in the document and the changes. Firebase
  /// creates the parents of a path written to.
  private func setFields(
    table: String, pk: String, _ changes: [(field: [String], values: ServerValues)],
    in transaction: WriteTransaction
  ) throws {
    let current = try transaction.get(table: table, pk: pk)
    var patches: [(path: ArraySlice<String>, value: JSONValue?)] = []
    var increments: [ServerValues.Increment] = []
    for (field, values) in changes {
      var value = values.value
      for increment in values.increments {
        let full = field + increment.path
        increments.append((full, increment.by))
        // The increment adds to what is there: keep it under a replacement.
        if !increment.path.isEmpty, case .object(var object)? = value,
          let kept = current?.value.value(at: FieldPath(full))
        {
          object.setValue(kept, at: FieldPath(increment.path))
          value = .object(object)
        }
      }
      if value == .null {
        patches.append((field[...], nil))
      } else if let value {
        patches.append((field[...], value))
      }
    }
    if current == nil && patches.allSatisfy({ $0.value == nil }) && increments.isEmpty { return }
    let patched = Self.patched(current?.value ?? JSONObject(), patches)
    // A document whose last member was removed is absent, as in Firebase.
    if patched.isEmpty && increments.isEmpty {
      try transaction.remove(table: table, pk: pk)
      return
    }
    try transaction.put(table: table, pk: pk, document: .object(patched))
    try self.increment(increments, table: table, pk: pk, transaction)
  }

  /// `object` with `patches` applied: disjoint paths, set or (nil) removed.
  /// Each member is visited once, whatever the number of patches, where
  /// one removal at a time would rebuild the object's index each time.
  static func patched(_ object: JSONObject, _ patches: [(path: ArraySlice<String>, value: JSONValue?)])
    -> JSONObject
  {
    var here: [ExactKey: JSONValue?] = [:]
    var deeper: [ExactKey: [(path: ArraySlice<String>, value: JSONValue?)]] = [:]
    var order: [String] = []
    for patch in patches {
      let head = ExactKey(patch.path.first!)
      if here[head] == nil && deeper[head] == nil { order.append(head.string) }
      if patch.path.count == 1 {
        here[head] = .some(patch.value)
      } else {
        deeper[head, default: []].append((patch.path.dropFirst(), patch.value))
      }
    }
    var members: [(key: String, value: JSONValue)] = []
    members.reserveCapacity(object.count + order.count)
    var seen: Set<ExactKey> = []
    for (key, value) in object {
      let exact = ExactKey(key)
      seen.insert(exact)
      if let replacement = here[exact] {
        if let replacement { members.append((key, replacement)) }
      } else if let nested = deeper[exact] {
        if case .object(let child) = value {
          // An object the patches emptied is absent, as in Firebase.
          let result = patched(child, nested)
          if !result.isEmpty || child.isEmpty { members.append((key, .object(result))) }
        } else if case .array(let elements) = value {
          // A write below an array addresses its elements by index, as
          // Firebase's object of index keys; the others stay.
          if let result = FirebaseArrays.normalized(keyed: patched(FirebaseArrays.keyed(elements), nested)) {
            members.append((key, result))
          }
        } else if nested.contains(where: { $0.value != nil }) {
          members.append((key, .object(patched(JSONObject(), nested))))
        } else {
          members.append((key, value))
        }
      } else {
        members.append((key, value))
      }
    }
    for key in order where !seen.contains(ExactKey(key)) {
      if let replacement = here[ExactKey(key)] {
        if let replacement { members.append((key, replacement)) }
      } else if let nested = deeper[ExactKey(key)], nested.contains(where: { $0.value != nil }) {
        members.append((key, .object(patched(JSONObject(), nested))))
      }
    }
    return JSONObject(uniqueMembers: members)
  }

  private func increment(
    _ increments: [ServerValues.Increment], table: String, pk: String,
    _ transaction: WriteTransaction
  ) throws {
    guard !increments.isEmpty else { return }
    let config = try store.table(named: table)
    let onCounter = increments.map { config.kind(of: $0.path.joined(separator: ".")) == .counter }
    for (increment, counter) in zip(increments, onCounter) where counter {
      if case .fraction(let amount) = increment.by {
        throw RESTError(
          400,
          "LOCAL_CONSTRAINT: \(increment.path.joined(separator: "/")) is a counter column: "
            + "its increments are integers (got \(amount))")
      }
    }
    try transaction.update(table: table, pk: pk) { document in
      for (increment, counter) in zip(increments, onCounter) {
        let path = FieldPath(increment.path)
        let current = document?[path].value
        if case .integer(let by) = increment.by, counter || Self.isIntegerOrAbsent(current, counter: false) {
          document?[path].increment(by: by)
        } else {
          // Firebase's rule off counter columns: a number gets the sum, and
          // anything else is replaced by the amount.
          let base = current?.numberText.flatMap(Double.init) ?? 0
          document?[path].set(try Self.number(base + increment.by.double, at: increment.path))
        }
      }
    }
  }

  /// Whether Folio's `increment` transform adds to `value` off a counter
  /// column: missing, null, or an integer number. A string is not a
  /// number to Firebase, so `"5"` is replaced by the amount, as Firebase
  /// replaces it; only a counter column also takes a decimal string, where
  /// Folio keeps integers past 32 bits.
  private static func isIntegerOrAbsent(_ value: JSONValue?, counter: Bool) -> Bool {
    switch value {
    case nil, .null?: true
    case .number(let text)?: DecimalInteger(text) != nil
    case .string(let text)?: counter && DecimalInteger(text) != nil
    default: false
    }
  }

  /// A sum as JSON: integral values without a fraction.
  /// - Throws: 400 for a sum past a double's range (`1e308` plus itself),
  ///   which JSON cannot write.
  private static func number(_ value: Double, at path: [String]) throws(RESTError) -> JSONValue {
    guard value.isFinite else {
      throw RESTError(
        400, "the increment of \(path.joined(separator: "/")) overflows: the sum is out of range")
    }
    if value.rounded() == value && abs(value) < 9_007_199_254_740_992 { return .number(String(Int64(value))) }
    return .number("\(value)")
  }

  /// A document, by the exact bytes of its table and pk.
  struct DocumentAddress: Hashable {
    var table: ExactKey
    var pk: ExactKey
    init(table: String, pk: String) {
      self.table = ExactKey(table)
      self.pk = ExactKey(pk)
    }
  }

  /// The documents a reply reads back, each read from the transaction once.
  struct DocumentCache {
    var documents: [DocumentAddress: JSONObject?] = [:]
  }

  /// The value at `path` after the write, as the transaction sees it: a
  /// table written is read back document by document (the documents it
  /// was given), not from the files, which do not show the write yet.
  private func value(
    at path: RESTPath, in transaction: WriteTransaction, cache: inout DocumentCache, written: ServerValues
  ) throws -> JSONValue {
    guard let table = path.table else { return .null }
    guard let pk = path.pk else {
      guard case .object(let documents)? = written.value else { return .null }
      var out = JSONObject()
      for (pk, _) in documents {
        if let document = try self.document(table, pk, transaction, &cache) { out[pk] = .object(document) }
      }
      return out.isEmpty ? .null : .object(out)
    }
    guard let document = try self.document(table, pk, transaction, &cache) else { return .null }
    guard let field = path.field else { return .object(document) }
    return document.childValue(at: field) ?? .null
  }

  private func document(
    _ table: String, _ pk: String, _ transaction: WriteTransaction, _ cache: inout DocumentCache
  ) throws -> JSONObject? {
    let key = DocumentAddress(table: table, pk: pk)
    if let known = cache.documents[key] { return known }
    let document = try transaction.get(table: table, pk: pk)?.value
    cache.documents[key] = document
    return document
  }
}

extension ServerValues {
  /// Values already split, for the documents of a table write.
  init(value: JSONValue?, increments: [ServerValues.Increment]) {
    self.value = value
    self.increments = increments
  }
}

extension JSONValue {
  /// An object's members; none for any other value.
  fileprivate var objectMembers: [(key: String, value: JSONValue)] {
    if case .object(let object) = self { return object.members }
    return []
  }
}
