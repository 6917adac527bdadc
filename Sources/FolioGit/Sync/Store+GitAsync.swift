import FolioCore

extension Store {
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
}
