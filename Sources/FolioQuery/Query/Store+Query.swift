import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// Queries' side of the store: writes with filters, the order indexes'
/// files, and the live queries' center (``ObservationCenter``).
extension Store {
  /// Applies one mutation to every document of `table` that matches
  /// `expression` (write with filters), in one transaction
  /// with one op per document; see ``Query/update(columns:transforms:dryRun:)-1msov``
  /// for the rules.
  ///
  /// ```swift
  /// try store.apply(table: "todos", where: "done == false", op: .update,
  ///                 columns: ["done": true], transforms: ["views": .increment(1)])
  /// ```
  /// - Parameters:
  ///   - expression: a filter in the language of ``Predicate``.
  ///   - op: update, upsert or remove (insert throws `LOCAL_CONSTRAINT`).
  ///   - dryRun: work everything out, write nothing.
  /// - Throws: `INVALID_QUERY` for a filter that does not parse;
  ///   `LOCAL_CONSTRAINT` for a malformed transform, before anything is
  ///   read or written; `UNKNOWN_TABLE`.
  @discardableResult
  public func apply(
    table: String, where expression: String, op: Mutation.Kind, columns: [String: JSONValue] = [:],
    transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) throws -> FilteredWriteResult {
    try collection(table).query().where(expression)
      .write(op: op, columns: columns, transforms: transforms, dryRun: dryRun)
  }

  /// ``apply(table:where:op:columns:transforms:dryRun:)`` with the columns
  /// and transforms as JSON objects, so twin keys stay two columns (the
  /// CLI's `--columns` and `--transforms` come this way).
  @discardableResult
  public func apply(
    table: String, where expression: String, op: Mutation.Kind, columns: JSONObject,
    transforms: JSONObject = [:], dryRun: Bool = false
  ) throws -> FilteredWriteResult {
    try collection(table).query().where(expression)
      .write(op: op, columns: columns, transforms: transforms, dryRun: dryRun)
  }

  /// ``apply(table:where:op:columns:transforms:dryRun:)`` with plain Swift
  /// values as columns.
  @discardableResult
  public func apply(
    table: String, where expression: String, op: Mutation.Kind, columns: [String: any JSONRepresentable],
    transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) throws -> FilteredWriteResult {
    try apply(
      table: table, where: expression, op: op, columns: try columns.jsonValues(), transforms: transforms,
      dryRun: dryRun)
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

  /// Brings table `name`'s index files in `.git/folio/index/` in line with
  /// its order keys and `indexes:` now, rather than at the next query:
  /// files built for other paths (an index added or removed since) are
  /// built again from the documents.
  ///
  /// ```swift
  /// let store = try store.addIndex("owner", to: "todos")
  /// try store.buildIndexes(table: "todos")
  /// ```
  /// - Throws: `UNKNOWN_TABLE`, or what reading the folder throws.
  public func buildIndexes(table name: String) throws {
    let table = try self.table(named: name)
    _ = try OrderIndexCache.snapshot(store: self, table: table, contents: true)
  }

  /// Removes the index files in `.git/folio/index/` kept under table name
  /// `name`, which no table has any more (after `folio tables rename`).
  ///
  /// ```swift
  /// let (store, _) = try store.renameTable("todos", to: "tasks")
  /// try store.removeIndexFiles(ofFormerTable: "todos")
  /// ```
  public func removeIndexFiles(ofFormerTable name: String) throws {
    let stem = privateDirectory + "/index/" + IndexNames.fileStem(name)
    for suffix in [".base", ".log", ".docs"] where unlink(stem + suffix) != 0 && errno != ENOENT {
      throw FileSystem.error(errno, "unlink", path: stem + suffix)
    }
  }

  /// Live queries of this store, told of every commit.
  var observation: ObservationCenter { attachments.value(ObservationCenter.self) { ObservationCenter() } }
}
