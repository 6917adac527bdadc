import FolioCore
import FolioQuery
import FolioSystem

extension Store {
  /// ``importRows(into:options:onBadRow:onProgress:)``, run on the store's
  /// executor. The callbacks run there too.
  ///
  /// ```swift
  /// let options = ImportOptions(path: "flights.ndjson")
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
