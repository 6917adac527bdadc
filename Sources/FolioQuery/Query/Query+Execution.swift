import FolioCore
import FolioJSON
import FolioSystem

extension Query {
  /// The ordering in force: the one chosen, else the table's first `order`
  /// key, else the key.
  func effectiveOrdering(_ table: TableConfig) -> Ordering {
    ordering ?? table.order.first.map { .child(FieldPath($0)) } ?? .key
  }

  /// The documents, in ascending order.
  ///
  /// ```swift
  /// let page = try todos.query().orderBy(child: "lastUpdate").limitToFirst(20).get()
  /// ```
  /// A document file that does not parse is left out; ``get(skipped:)``
  /// says which.
  /// - Throws: `UNKNOWN_TABLE`.
  public func get() throws -> [Document] {
    var cursor = try documents()
    var result: [Document] = []
    while let document = try cursor.next() { result.append(document) }
    return result
  }

  /// The number of documents the query returns. No document is read when
  /// the ordering is indexed and there is no filter, or only one that the
  /// index range decides (`dep_delay > 300` ordered by `dep_delay`).
  public func count() throws -> Int {
    var skipped: [FolioError] = []
    return try count(skipped: &skipped)
  }

  /// ``count()-5r8ct``, adding the document files left out because they do not
  /// parse to `skipped` (see ``QueryCursor/skipped``).
  public func count(skipped: inout [FolioError]) throws -> Int {
    let store = collection.store
    let table = try store.table(named: collection.name)
    let plan = try accessPlan(store: store, table: table)
    var cursor = try cursor(plan, store: store, table: table, limit: limit)
    defer { skipped += cursor.skipped }
    if filter == nil || plan.filterImplied {
      // Counted without reading a document: a file edited into one that
      // does not parse is found only by a check of the contents, which a
      // plan that needs the set of documents alone did not make.
      if !plan.contentsChecked {
        cursor.leaveOut(try OrderIndexCache.snapshot(store: store, table: table, contents: true).unreadable)
      }
      return cursor.countWithoutReading()
    }
    if limit == nil && plan.lower == nil && plan.upper == nil, let n = try cursor.countInPackOrder() {
      return n
    }
    var n = 0
    while try cursor.next() != nil { n += 1 }
    return n
  }

  /// Calls `body` with each document in order, reading one at a time, so
  /// memory stays flat however large the table.
  public func forEach(_ body: (Document) throws -> Void) throws {
    var cursor = try documents()
    while let document = try cursor.next() { try body(document) }
  }

  /// A cursor that reads the documents one at a time, in order.
  ///
  /// ```swift
  /// var cursor = try flights.query().orderBy(child: "dep_delay").documents()
  /// while let flight = try cursor.next() { export(flight) }
  /// ```
  public func documents() throws -> QueryCursor {
    let store = collection.store
    let table = try store.table(named: collection.name)
    return try cursor(try accessPlan(store: store, table: table), store: store, table: table, limit: limit)
  }

  /// A cursor that runs `plan`, stopping at `limit`.
  func cursor(_ plan: AccessPlan, store: Store, table: TableConfig, limit: Limit?) throws -> QueryCursor {
    let constant: OrderValue = plan.ordering == .value ? .composite : .null
    if let candidates = plan.candidates, let snapshot = plan.snapshot {
      // The filter's index range, then sorted in the query's order.
      var pks: [String] = []
      for var range in candidates.ranges(in: snapshot) {
        while let pk = range.next() { pks.append(pk) }
      }
      var items: [(value: OrderValue, pk: String)] = []
      var preloaded: [ExactKey: JSONObject] = [:]
      var skipped: [FolioError] = []
      switch plan.natural {
      case .pk:
        items = pks.map { (constant, $0) }
      case .index(let key, _):
        let values = snapshot.lookup(key: key)
        items = pks.map { (values($0), $0) }
      case .scan(let path):
        // The order value is in the document: read it once, filter it
        // here, and hand it to the cursor.
        for pk in pks {
          QueryStatistics.countRead(folder: store.directory(of: table))
          guard let read = try QueryCursor.readSkipping(store, table, pk, into: &skipped) else { continue }
          if let filter, !filter.matches(read.object) { continue }
          items.append((OrderValue(read.object.childValue(at: path)), pk))
          preloaded[ExactKey(pk)] = read.object
        }
      }
      return QueryCursor(
        store: store, table: table,
        range: MergedRange(runs: [ArrayRun(sorting: items)], lower: plan.lower, upper: plan.upper),
        limit: limit, filter: filter, preloaded: preloaded, unreadable: snapshot.unreadable, skipped: skipped)
    }
    var runs: [any OrderedRun]
    var filtered = false
    var packed: PackedDocuments?
    var packSnapshot: IndexSnapshot?
    var unreadable: [String: FolioError] = [:]
    switch plan.natural {
    case .pk, .index:
      var snapshot: IndexSnapshot
      if case .index(let key, _) = plan.natural {
        snapshot = try plan.snapshot ?? OrderIndexCache.snapshot(store: store, table: table, contents: true)
        runs = snapshot.runs(key: key, constant: .null)
      } else {
        snapshot = try plan.snapshot ?? OrderIndexCache.snapshot(store: store, table: table, contents: false)
        // Documents are objects, which all sort alike: the order is the pk's.
        runs = snapshot.runs(key: nil, constant: constant)
      }
      // A read of much of the table: the packed cache beats opening each
      // file. (Its records are checked against the index, which must then
      // vouch for every file's contents.) Checking the pack costs about
      // 0.2 µs a record, a walk of all of them unless a saved check
      // spares it (``PackCheckFile``); opening a file about 8 µs, so from
      // a sixteenth of the table on, the pack wins even with the walk.
      let reads = MergedRange(runs: runs, lower: plan.lower, upper: plan.upper).estimatedCount
      if filter != nil || limit == nil,
        reads >= Swift.max(PackedDocuments.minimumReads, snapshot.approximateCount / 16)
      {
        if !plan.contentsChecked {
          snapshot = try OrderIndexCache.snapshot(store: store, table: table, contents: true)
          runs = snapshot.runs(key: nil, constant: constant)
        }
        packSnapshot = snapshot
      }
      unreadable = snapshot.unreadable
    case .scan(let path):
      let (run, documents) = try scan(store: store, table: table, path: path, snapshot: plan.snapshot)
      runs = [run]
      packed = documents
      filtered = true
      unreadable = documents.unreadable
    }
    return QueryCursor(
      store: store, table: table, range: MergedRange(runs: runs, lower: plan.lower, upper: plan.upper),
      limit: limit, filter: filtered || plan.filterImplied ? nil : filter, packed: packed,
      packSnapshot: packSnapshot, unreadable: unreadable)
  }

  /// Orders by a path that has no index: reads every document once (from
  /// the packed cache, where it is current), keeping only its value and pk,
  /// and only if it passes the filter. The documents stay at hand for the
  /// cursor.
  private func scan(store: Store, table: TableConfig, path: FieldPath, snapshot: IndexSnapshot?) throws -> (
    ArrayRun, PackedDocuments
  ) {
    let snapshot = try snapshot ?? OrderIndexCache.snapshot(store: store, table: table, contents: true)
    let documents = PackedDocuments(store: store, table: table, snapshot: snapshot)
    var items: [(value: OrderValue, pk: String)] = []
    items.reserveCapacity(documents.count)
    let filter = self.filter
    // swift-format-ignore: ReplaceForEachWithForLoop
    // (PackedDocuments is not a Sequence: its forEach reads records in place.)
    try documents.forEach { pk, object in
      if let filter, !filter.matches(object) { return }
      items.append((OrderValue(object.childValue(at: path)), pk))
    }
    return (ArrayRun(sorting: items), documents)
  }
}

/// Reads a query's documents one at a time, in ascending order; from
/// ``Query/documents()``.
public struct QueryCursor {
  private let store: Store
  private let table: TableConfig
  private var range: MergedRange
  private let limit: Query.Limit?
  private let filter: Predicate?
  private var returned = 0
  /// For `limitToLast`: the documents, found back to front, then handed out.
  private var buffered: [Document]?
  /// Documents the plan has read already, by pk.
  private var preloaded: [ExactKey: JSONObject]
  /// The table's documents, read from the packed cache, for a cursor that
  /// reads many.
  private var packed: PackedDocuments?
  /// The checked index to read the packed cache against on the first load
  /// (not before: a count reads no document).
  private var packSnapshot: IndexSnapshot?
  /// The filter, judged on a packed document's bytes where it can be.
  private let packedFilter: PackedFilter?
  /// Scratch space for ``packedFilter``.
  private var packedScratch: [Range<Int>?] = []
  /// Whether the documents come last first (``reverse()``).
  private var descending = false
  /// Where documents come from in place of the table's files (a past
  /// commit's tree, ``Query/cursor(table:pks:load:)``).
  private let source: ((String) throws -> JSONObject?)?
  /// The files the index knows not to parse, by pk: left out unread.
  private var unreadable: [String: FolioError]
  /// The files found not to parse while reading.
  private var found: [FolioError]

  /// The document files left out because they do not parse (a truncated
  /// save, a stray comma), each an error at its `file:line:col`, in path
  /// order: every such file of the table the index knows of, and any met
  /// while reading. The rest of the answer is unaffected; `folio query`
  /// names them on stderr and exits 3.
  ///
  /// ```swift
  /// var cursor = try todos.query().documents()
  /// while let todo = try cursor.next() { print(todo.pk) }
  /// for file in cursor.skipped { print("skipped: \(file)") }
  /// ```
  public var skipped: [FolioError] {
    var seen = Set<FolioError.SourceLocation?>()
    return (Array(unreadable.values) + found + (packed?.skipped ?? []))
      .filter { seen.insert($0.location).inserted }
      .sorted { ($0.location?.file ?? "") < ($1.location?.file ?? "") }
  }

  init(
    store: Store, table: TableConfig, range: MergedRange, limit: Query.Limit?, filter: Predicate?,
    preloaded: [ExactKey: JSONObject] = [:], packed: PackedDocuments? = nil,
    packSnapshot: IndexSnapshot? = nil, source: ((String) throws -> JSONObject?)? = nil,
    unreadable: [String: FolioError] = [:], skipped: [FolioError] = []
  ) {
    self.source = source
    self.unreadable = unreadable
    self.found = skipped
    self.packed = packed
    self.packSnapshot = packSnapshot
    packedFilter = filter.flatMap(PackedFilter.init)
    self.store = store
    self.table = table
    self.range = range
    self.limit = limit
    self.filter = filter
    self.preloaded = preloaded
  }

  /// The next document, or nil at the end. A document file that does not
  /// parse is passed over and added to ``skipped``.
  public mutating func next() throws -> Document? {
    switch limit {
    case .last(let n):
      if buffered == nil {
        var found: [Document] = []
        while found.count < n, let pk = range.previous() {
          if let document = try load(pk) { found.append(document) }
        }
        buffered = found
      }
      return buffered!.popLast()
    case .first(let n):
      guard returned < n else { return nil }
      fallthrough
    case nil:
      while let pk = descending ? range.previous() : range.next() {
        if let document = try load(pk) {
          returned += 1
          return document
        }
      }
      return nil
    }
  }

  /// Hands the documents out last first, for a query without a limit that
  /// has not handed any out yet: a descending export reads in step, with
  /// nothing buffered.
  /// - Throws: `INVALID_QUERY` for a query with a limit, whose first or
  ///   last documents reversed would be neither.
  package mutating func reverse() throws {
    guard limit == nil else {
      throw FolioError(
        .invalidQuery,
        "a reversed read takes every document of the range: drop limitToFirst and limitToLast, or use limitToLast for the last ones"
      )
    }
    precondition(returned == 0 && !descending, "only a fresh cursor reverses")
    descending = true
  }

  /// The document `pk`, if it still exists and passes the filter.
  private mutating func load(_ pk: String) throws -> Document? {
    if !unreadable.isEmpty && unreadable[pk] != nil { return nil }
    if !preloaded.isEmpty, let object = preloaded.removeValue(forKey: ExactKey(pk)) {
      if let filter, !filter.matches(object) { return nil }
      return Document(pk: pk, table: table.name, value: object)
    }
    if let source {
      guard let object = try source(pk) else { return nil }
      if let filter, !filter.matches(object) { return nil }
      return Document(pk: pk, table: table.name, value: object)
    }
    openPack()
    if let packed {
      // Only the members the filter reads, where that is all it needs:
      // most documents a filter drops are never parsed whole.
      var judged: Bool?
      if let packedFilter { judged = packed.matches(pk, packed: packedFilter, scratch: &packedScratch) }
      if judged == false { return nil }
      guard let object = try packed.object(pk) else { return nil }
      if judged == nil, let filter, !filter.matches(object) { return nil }
      return Document(pk: pk, table: table.name, value: object)
    }
    QueryStatistics.countRead(folder: store.directory(of: table))
    guard let read = try Self.readSkipping(store, table, pk, into: &found) else { return nil }
    if let filter, !filter.matches(read.object) { return nil }
    return Document(pk: pk, table: table.name, value: read.object)
  }

  /// Reads document `pk`; nil when it is gone, or when it does not parse,
  /// which adds its error to `skipped`.
  static func readSkipping(
    _ store: Store, _ table: TableConfig, _ pk: String, into skipped: inout [FolioError]
  )
    throws -> (bytes: [UInt8], object: JSONObject)?
  {
    do {
      return try store.readDocument(at: try store.documentPath(table: table, pk: pk))
    } catch let error as FolioError where error.isUnreadableDocument {
      skipped.append(error)
      return nil
    }
  }

  /// Counts the documents that pass the filter in the packed cache's
  /// order rather than the query's, which needs no lookup by pk; nil when
  /// this cursor does not read the pack. Only for a cursor over every
  /// document (no bounds, no limit), before its first ``next()``.
  mutating func countInPackOrder() throws -> Int? {
    guard let filter else { return nil }
    openPack()
    return try packed?.count(matching: filter, packed: packedFilter)
  }

  /// Reads the packed cache against the checked index on first use.
  private mutating func openPack() {
    guard let snapshot = packSnapshot else { return }
    packSnapshot = nil
    packed = PackedDocuments(store: store, table: table, snapshot: snapshot)
  }

  /// Leaves out the files `more` names as not parsing, unread.
  mutating func leaveOut(_ more: [String: FolioError]) {
    unreadable.merge(more) { a, _ in a }
  }

  /// Counts what is left without reading documents (only without a filter).
  mutating func countWithoutReading() -> Int {
    var n = 0
    let cap: Int
    switch limit {
    case .first(let k), .last(let k): cap = k
    case nil: cap = .max
    }
    while n < cap, let pk = range.next() {
      if unreadable.isEmpty || unreadable[pk] == nil { n += 1 }
    }
    return n
  }
}

extension Query {
  /// Whether the query runs on a persistent index (its ordering is the key,
  /// the value, or a path listed under `order` or `indexes`), so that it
  /// can count and page without reading every document.
  package func isIndexed(_ table: TableConfig) -> Bool {
    switch effectiveOrdering(table) {
    case .key, .value: true
    case .child(let path): table.indexedPaths.contains { FieldPath($0) == path }
    }
  }
}
