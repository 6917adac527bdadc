import FolioJSON
import FolioSystem

/// The mutations of one ``Store/write(_:)-3g7od`` call. They land together, with
/// one durability point, when the call's body returns.
///
/// Reads through the transaction see its own earlier writes.
public final class WriteTransaction {
  let store: Store
  private var lastHLC: HLC?
  package private(set) var ops: [Op] = []
  private var staged: [String: Staged] = [:]
  private var stagedOrder: [String] = []
  /// Per document, whether it ends the transaction evicted (true) or written
  /// (false); only the last state counts.
  private var evictions: [DocumentKey: Bool] = [:]
  /// Documents whose bytes already passed their table's schema, by path:
  /// the commit checks only what differs (see ``Store/write(_:)``).
  var checkedWrites: [String: CheckedDocument] = [:]

  private struct DocumentKey: Hashable {
    var table: String
    var pk: String
  }

  private struct Staged {
    var table: TableConfig
    var pk: String
    var originalHash: String?
    var original: JSONObject?
    var document: JSONObject?
    var changed = false
  }

  init(store: Store, lastHLC: HLC?) {
    self.store = store
    self.lastHLC = lastHLC
  }

  /// Checks the documents written so far against their tables' schemas,
  /// each only once for the same bytes, so that a caller can refuse one
  /// change of several in a ``savepoint(_:)`` (a server's batch of requests)
  /// rather than the whole transaction at its commit.
  /// - Throws: `SCHEMA_VIOLATION` for the first document that breaks it.
  package func checkSchemas() throws {
    try store.writer.checkSchemas(stagedWrites(), checked: &checkedWrites)
  }

  /// Runs `body`; if it throws, the transaction is left as it was before,
  /// its writes in `body` undone, and the error goes on. For a caller that
  /// puts independent changes in one transaction, so that they share one
  /// durability point, and must let one fail without the others (group
  /// commit, `folio serve`).
  package func savepoint<T>(_ body: () throws -> T) throws -> T {
    let saved = (lastHLC, ops, staged, stagedOrder, evictions)
    do {
      return try body()
    } catch {
      (lastHLC, ops, staged, stagedOrder, evictions) = saved
      throw error
    }
  }

  // MARK: Reading

  /// The document as this transaction sees it.
  public func get(table: String, pk: String) throws -> Document? {
    let config = try store.table(named: table)
    guard let document = try load(table: config, pk: pk).document else { return nil }
    return Document(pk: pk, table: table, value: document)
  }

  private func load(table: TableConfig, pk: String) throws -> (path: String, document: JSONObject?) {
    let path = try store.documentPath(table: table, pk: pk)
    if let entry = staged[path] { return (path, entry.document) }
    let read = try store.readDocument(at: path)
    staged[path] = Staged(
      table: table, pk: pk, originalHash: read.map { FNV.hex($0.bytes) }, original: read?.object,
      document: read?.object)
    stagedOrder.append(path)
    return (path, read?.object)
  }

  // MARK: Mutations

  /// Applies one mutation with every transform rule (docs/architecture.md, "The transform rules"); see
  /// ``Store/apply(table:pk:op:columns:transforms:)-(_,_,_,JSONObject,_)``.
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: JSONValue] = [:],
    transforms: [String: JSONValue] = [:]
  ) throws -> [UpdateResult] {
    // One body for both forms: a dictionary's keys are distinct.
    try apply(
      table: table, pk: pk, op: op, columns: JSONObject(columns.map { ($0.key, $0.value) }),
      transforms: JSONObject(transforms.map { ($0.key, $0.value) }))
  }

  /// Calls `body` with the document (nil if missing) and records what it
  /// changed as one mutation.
  @discardableResult
  public func update(table: String, pk: String, _ body: (MutableDocument?) throws -> Void) throws
    -> [UpdateResult]
  {
    let config = try store.table(named: table)
    try PrimaryKey.validate(pk)
    guard let current = try load(table: config, pk: pk).document else {
      try body(nil)
      return []
    }
    let document = MutableDocument(pk: pk, value: current)
    try body(document)
    if let error = document.deferredError { throw error }
    return try record(document.mutation, table: config, pk: pk)
  }

  /// Replaces the whole document with `document`. The change is recorded as
  /// the diff from the current document, read through the column kinds, so
  /// it merges column by column.
  /// - Parameter pk: the pk, or nil to take it from the key column (or to
  ///   generate one if that is missing too).
  /// - Returns: the pk and what changed.
  @discardableResult
  public func put(table: String, pk: String?, document: JSONValue) throws -> (
    pk: String, results: [UpdateResult]
  ) {
    let config = try store.table(named: table)
    guard case .object(var object) = document else {
      throw FolioError(
        .invalidDocument, "a document must be a JSON object, not \(document.kindName)", table: table)
    }
    let pk = try resolvePK(pk, in: object, table: config)
    if let keyColumn = config.key { object[keyColumn] = object[keyColumn] ?? .string(pk) }
    let current = try load(table: config, pk: pk).document
    let mutation = Mutation.diff(from: current, to: object, kinds: config.kind(of:))
    return (pk, try record(mutation, table: config, pk: pk))
  }

  /// Removes the document; the removal is recorded, so it syncs.
  /// - Returns: whether there was a document to remove.
  @discardableResult
  public func remove(table: String, pk: String) throws -> Bool {
    let config = try store.table(named: table)
    try PrimaryKey.validate(pk)
    return !(try record(Mutation(kind: .remove), table: config, pk: pk)).isEmpty
  }

  /// Removes the local copy only. Nothing is recorded, and Folio remembers
  /// that the document was evicted, not deleted, so a commit will not record
  /// a delete; when the transaction commits, git's index entry (if git
  /// tracks the file) is marked skip-worktree, so plain git agrees.
  /// - Returns: whether there was a document to evict.
  @discardableResult
  public func evict(table: String, pk: String) throws -> Bool {
    let config = try store.table(named: table)
    let (path, current) = try load(table: config, pk: pk)
    guard current != nil else { return false }
    staged[path]!.document = nil
    staged[path]!.changed = true
    evictions[DocumentKey(table: table, pk: pk)] = true
    return true
  }

  /// Inserts or merges `value` by its key column, as the write strategy says.
  /// - Returns: the pk (generated if the value has no key column).
  @discardableResult
  public func upsert(table: String, value: JSONValue, writeStrategy: WriteStrategy = .merge) throws
    -> String
  {
    let config = try store.table(named: table)
    guard case .object(let object) = value else {
      throw FolioError(
        .invalidDocument, "a document must be a JSON object, not \(value.kindName)", table: table)
    }
    let pk = try resolvePK(nil, in: object, table: config)
    let exists = try load(table: config, pk: pk).document != nil
    let assignments = object.map { Mutation.Assignment(path: .column($0.key), value: $0.value) }
    switch writeStrategy {
    case .merge:
      try record(Mutation(kind: .upsert, assignments: assignments), table: config, pk: pk)
    case .insertIfAbsent, .insertDefaultIfAbsent:
      if !exists {
        try record(
          Mutation(kind: .insert, assignments: assignments), table: config, pk: pk,
          defaultWrite: writeStrategy == .insertDefaultIfAbsent)
      }
    }
    return pk
  }

  /// The pk given, else the key column's, else a generated one.
  private func resolvePK(_ given: String?, in object: JSONObject, table: TableConfig) throws -> String {
    let pk: String
    if let given {
      pk = given
    } else if let keyColumn = table.key {
      switch object[keyColumn] {
      case .string(let text)?: pk = text
      case .number(let text)?: pk = text
      case nil, .null?: pk = PrimaryKey.generate()
      case let other?:
        throw FolioError(
          .localConstraint,
          "key column '\(keyColumn)' must be a string or a number, not \(other.kindName)",
          table: table.name)
      }
    } else {
      pk = PrimaryKey.generate()
    }
    try PrimaryKey.validate(pk)
    return pk
  }

  /// Logs `mutation` as an op without touching the document file: the file
  /// already holds the change (an edit made outside Folio).
  package func log(_ mutation: Mutation, table: TableConfig, pk: String, fromTree: Bool = false) {
    ops.append(
      Op(hlc: stamp(defaultWrite: false), table: table.name, pk: pk, mutation: mutation, fromTree: fromTree))
  }

  /// Applies `mutation` to the staged document and logs it as an op.
  @discardableResult
  package func record(_ mutation: Mutation, table: TableConfig, pk: String, defaultWrite: Bool = false)
    throws -> [UpdateResult]
  {
    try checkKeyColumn(mutation, table: table, pk: pk)
    let (path, current) = try load(table: table, pk: pk)
    if mutation.kind == .insert && current != nil {
      throw FolioError(
        .localConstraint,
        "document '\(pk)' already exists in table '\(table.name)'; use update or upsert to change it",
        table: table.name, pk: pk)
    }
    if mutation.isEmpty && current != nil { return [] }
    let outcome = mutation.apply(to: current, pk: pk, key: table.key)
    if current == nil && outcome.document == nil { return [] }
    staged[path]!.document = outcome.document
    staged[path]!.changed = true
    var recorded = mutation
    // seed 002: on insert a transform "changes nothing", so it is not logged.
    if recorded.kind == .insert { recorded.transforms = [] }
    ops.append(Op(hlc: stamp(defaultWrite: defaultWrite), table: table.name, pk: pk, mutation: recorded))
    if outcome.document != nil { evictions[DocumentKey(table: table.name, pk: pk)] = false }
    return outcome.results
  }

  private func checkKeyColumn(_ mutation: Mutation, table: TableConfig, pk: String) throws {
    guard let key = table.key else { return }
    for assignment in mutation.assignments where assignment.path.column == key {
      if assignment.path.segments.count == 1, let value = assignment.value,
        Document.keyMatches(value, pk: pk)
      {
        continue
      }
      throw FolioError(
        .localConstraint,
        "column '\(key)' is the key of table '\(table.name)' and must stay equal to the pk '\(pk)'",
        table: table.name, pk: pk)
    }
    if mutation.transforms.contains(where: { $0.path.column == key }) {
      throw FolioError(
        .localConstraint,
        "column '\(key)' is the key of table '\(table.name)'; transforms cannot change it",
        table: table.name, pk: pk)
    }
  }

  /// The next HLC. A default write (``WriteStrategy/insertDefaultIfAbsent``)
  /// is stamped at wall time 0, so any other write to it wins a merge.
  private func stamp(defaultWrite: Bool) -> HLC {
    if defaultWrite { return HLC(wall: 0, counter: 0, replica: store.replicaID) }
    let next = HLC.next(after: lastHLC, now: SystemClock.nowMilliseconds(), replica: store.replicaID)
    lastHLC = next
    return next
  }

  // MARK: Commit

  /// The document files this transaction changes, for the journal.
  func stagedWrites() -> [Journal.Write] {
    stagedOrder.compactMap { path in
      let entry = staged[path]!
      // Created and gone again within the transaction: nothing to write.
      guard entry.changed, entry.document != nil || entry.originalHash != nil else { return nil }
      // An eviction is not a change to fold an edit into: it only drops
      // the local copy.
      let evicted = evictions[DocumentKey(table: entry.table.name, pk: entry.pk)] == true
      return Journal.Write(
        path: path, oldHash: entry.originalHash,
        new: entry.document.map { JSONValue.object($0).canonicalBytes() },
        fold: evicted
          ? nil
          : Journal.Fold(table: entry.table, pk: entry.pk, original: entry.original, new: entry.document))
    }
  }

  /// Records evictions before the documents go, and forgets them after the
  /// documents are written again, so that after a crash a missing document
  /// is never mistaken for a deleted one.
  /// - Returns: when forgetting (`evicted` false), the relative paths of the
  ///   documents that were evicted and are written again.
  @discardableResult
  func commitEvictions(evicted: Bool) throws -> Set<String> {
    let changes = evictions.filter { $0.value == evicted }
    guard !changes.isEmpty else { return [] }
    var set = try store.evictions.load()
    let before = set
    var restored = Set<String>()
    for (key, _) in changes {
      if evicted {
        set[key.table, default: []].insert(ExactKey(key.pk))
      } else if set[key.table]?.remove(ExactKey(key.pk)) != nil {
        if set[key.table]?.isEmpty == true { set[key.table] = nil }
        if let table = store.config.table(named: key.table) {
          restored.insert(store.relative(try store.documentPath(table: table, pk: key.pk)))
        }
      }
    }
    if set != before { try store.evictions.save(set) }
    return restored
  }
}

/// How ``DocumentCollection/upsert(_:writeStrategy:)-52jl9`` treats an existing document.
public enum WriteStrategy: String, Sendable, CaseIterable {
  /// Create the document, or assign the given columns over the existing one.
  case merge
  /// Create the document only if there is none; otherwise change nothing.
  case insertIfAbsent
  /// Like `insertIfAbsent`, but the write counts as default data: it is
  /// stamped at time zero, so any other write to the document wins a merge.
  case insertDefaultIfAbsent
}
