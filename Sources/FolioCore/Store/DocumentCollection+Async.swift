import FolioJSON

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
