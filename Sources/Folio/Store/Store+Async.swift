import Dispatch

/// `async` forms of every blocking call.
///
/// Each runs the blocking call on the store's own serial queue (one per
/// ``Store``, like GRDB's `SerializedDatabase`), never on Swift's
/// cooperative thread pool, and resumes the caller when it is done. Calls on
/// one store run one after another, in the order they were made; the calls
/// of different stores, and of other processes, still coordinate through
/// the store lock as the blocking forms do. Cancelling the calling task does
/// not interrupt a call that has started: a write either lands whole or not
/// at all.
///
/// ```swift
/// try await store.apply(
///   table: "todos", pk: todoId, op: .update, columns: [:],
///   transforms: ["views": ["op": "increment", "by": 1]])
/// let todo = try await todos.findByID(todoId).exec(as: Todo.self)
/// ```
extension Store {
  /// Runs `body` on the store's executor and returns its result.
  func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      executor.async { continuation.resume(with: Result { try body() }) }
    }
  }

  /// ``write(_:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await store.write { tx in
  ///     try tx.apply(table: "todos", pk: "a", op: .upsert, columns: ["done": true])
  /// }
  /// ```
  @discardableResult
  public func write<T: Sendable>(_ body: @escaping @Sendable (WriteTransaction) throws -> T) async throws -> T
  {
    try await perform { try self.write(body) }
  }

  /// ``apply(table:pk:op:columns:transforms:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await store.apply(table: "todos", pk: todoId, op: .update,
  ///                       columns: ["done": true], transforms: ["views": .increment(1)])
  /// ```
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: JSONValue] = [:],
    transforms: [String: JSONValue] = [:]
  ) async throws -> [UpdateResult] {
    try await perform {
      try self.apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms)
    }
  }

  /// ``apply(table:pk:op:columns:transforms:)`` with Swift values, run on
  /// the store's executor.
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: any JSONRepresentable],
    transforms: [String: JSONValue] = [:]
  ) async throws -> [UpdateResult] {
    let columns = try columns.jsonValues()
    return try await apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms)
  }

  /// ``apply(table:where:op:columns:transforms:dryRun:)``, run on the
  /// store's executor.
  @discardableResult
  public func apply(
    table: String, where expression: String, op: Mutation.Kind, columns: [String: JSONValue] = [:],
    transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) async throws -> FilteredWriteResult {
    try await perform {
      try self.apply(
        table: table, where: expression, op: op, columns: columns, transforms: transforms, dryRun: dryRun)
    }
  }

  /// ``apply(table:where:op:columns:transforms:dryRun:)`` with Swift values,
  /// run on the store's executor.
  @discardableResult
  public func apply(
    table: String, where expression: String, op: Mutation.Kind, columns: [String: any JSONRepresentable],
    transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) async throws -> FilteredWriteResult {
    let columns = try columns.jsonValues()
    return try await apply(
      table: table, where: expression, op: op, columns: columns, transforms: transforms, dryRun: dryRun)
  }

  /// ``sync(remote:push:)``, run on the store's executor.
  ///
  /// ```swift
  /// let summary = try await store.sync()
  /// ```
  @discardableResult
  public func sync(remote: String = "origin", push: Bool = true) async throws -> SyncSummary {
    try await perform { try self.sync(remote: remote, push: push) }
  }

  /// ``commit(message:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await store.commit(message: "nightly")
  /// ```
  @discardableResult
  public func commit(message: String? = nil) async throws -> CommitSummary {
    try await perform { try self.commit(message: message) }
  }

  /// ``status()``, run on the store's executor.
  public func status() async throws -> StoreStatus {
    try await perform { try self.status() }
  }

  /// ``importRows(into:options:onBadRow:onProgress:)``, run on the store's
  /// executor. The callbacks run there too.
  ///
  /// ```swift
  /// var options = ImportOptions()
  /// options.inputPath = "flights.ndjson"
  /// try await store.importRows(into: "flights", options: options)
  /// ```
  @discardableResult
  public func importRows(
    into tableName: String, options: ImportOptions,
    onBadRow: @escaping @Sendable (FolioError) -> Void = { _ in },
    onProgress: @escaping @Sendable (ImportProgress) -> Void = { _ in }
  ) async throws -> ImportSummary {
    try await perform {
      try self.importRows(into: tableName, options: options, onBadRow: onBadRow, onProgress: onProgress)
    }
  }

  /// ``exportRows(from:options:onProgress:)``, run on the store's executor.
  @discardableResult
  public func exportRows(
    from tableName: String, options: ExportOptions,
    onProgress: @escaping @Sendable (Int, Int?) -> Void = { _, _ in }
  ) async throws -> ExportSummary {
    try await perform { try self.exportRows(from: tableName, options: options, onProgress: onProgress) }
  }

  /// ``exportRows(_:options:onProgress:)``, run on the store's executor.
  ///
  /// ```swift
  /// var options = ExportOptions()
  /// options.outputPath = "open.ndjson"
  /// try await store.exportRows(todos.query().where("done == false"), options: options)
  /// ```
  @discardableResult
  public func exportRows(
    _ query: Query, options: ExportOptions, onProgress: @escaping @Sendable (Int, Int?) -> Void = { _, _ in }
  ) async throws -> ExportSummary {
    try await perform { try self.exportRows(query, options: options, onProgress: onProgress) }
  }
}

extension DocumentCollection {
  /// ``upsert(_:writeStrategy:)-(JSONValue,_)``, run on the store's executor.
  @discardableResult
  public func upsert(_ value: JSONValue, writeStrategy: WriteStrategy = .merge) async throws -> String {
    try await store.perform { try self.upsert(value, writeStrategy: writeStrategy) }
  }

  /// ``upsert(_:writeStrategy:encoder:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await todos.upsert(Todo(id: "a", title: "Buy milk"))
  /// ```
  @discardableResult
  public func upsert<T: Encodable>(
    _ value: T, writeStrategy: WriteStrategy = .merge, encoder: JSONValueEncoder = JSONValueEncoder()
  ) async throws -> String {
    let json = try encoder.encode(value)
    return try await upsert(json, writeStrategy: writeStrategy)
  }

  /// ``insert(_:encoder:)``, run on the store's executor.
  @discardableResult
  public func insert<T: Encodable>(_ value: T, encoder: JSONValueEncoder = JSONValueEncoder()) async throws
    -> String
  {
    let json = try encoder.encode(value)
    return try await store.perform { try self.insert(json) }
  }
}

extension PendingIDSpecificOperation {
  /// ``exec()``, run on the store's executor.
  public func exec() async throws -> Document? {
    try await collection.store.perform { try self.exec() }
  }

  /// ``exec(as:decoder:)``, run on the store's executor.
  ///
  /// ```swift
  /// let todo = try await todos.findByID("a").exec(as: Todo.self)
  /// ```
  public func exec<T: Decodable & Sendable>(as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder())
    async throws -> T?
  {
    try await collection.store.perform { try self.exec(as: type, decoder: decoder) }
  }

  /// ``update(_:)``, run on the store's executor (and `body` with it).
  ///
  /// ```swift
  /// try await todos.findByID("a").update { d in d?["done"] = true }
  /// ```
  @discardableResult
  public func update(_ body: @escaping @Sendable (MutableDocument?) throws -> Void) async throws
    -> [UpdateResult]
  {
    try await collection.store.perform { try self.update(body) }
  }

  /// ``remove()``, run on the store's executor.
  @discardableResult
  public func remove() async throws -> Bool {
    try await collection.store.perform { try self.remove() }
  }

  /// ``evict()``, run on the store's executor.
  @discardableResult
  public func evict() async throws -> Bool {
    try await collection.store.perform { try self.evict() }
  }
}

extension Query {
  /// ``get()``, run on the store's executor.
  ///
  /// ```swift
  /// let page = try await todos.query().orderBy(child: "lastUpdate").limitToFirst(20).get()
  /// ```
  public func get() async throws -> [Document] {
    try await collection.store.perform { try self.get() }
  }

  /// ``get(as:decoder:)``, run on the store's executor.
  public func get<T: Decodable & Sendable>(as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder())
    async throws -> [T]
  {
    try await collection.store.perform { try self.get(as: type, decoder: decoder) }
  }

  /// ``count()``, run on the store's executor.
  public func count() async throws -> Int {
    try await collection.store.perform { try self.count() }
  }

  /// ``update(columns:transforms:dryRun:)-([String:JSONValue],_,_)``, run on
  /// the store's executor.
  @discardableResult
  public func update(
    columns: [String: JSONValue] = [:], transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) async throws -> FilteredWriteResult {
    try await collection.store.perform {
      try self.update(columns: columns, transforms: transforms, dryRun: dryRun)
    }
  }

  /// ``update(columns:transforms:dryRun:)`` with Swift values, run on the
  /// store's executor.
  @discardableResult
  public func update(
    columns: [String: any JSONRepresentable], transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) async throws -> FilteredWriteResult {
    let columns = try columns.jsonValues()
    return try await update(columns: columns, transforms: transforms, dryRun: dryRun)
  }

  /// ``remove(dryRun:)``, run on the store's executor.
  @discardableResult
  public func remove(dryRun: Bool = false) async throws -> FilteredWriteResult {
    try await collection.store.perform { try self.remove(dryRun: dryRun) }
  }
}
