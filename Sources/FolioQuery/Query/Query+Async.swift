import FolioCore
import FolioJSON

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
