import Dispatch
import FolioJSON

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
  package func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
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
