import FolioCore
import FolioJSON

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
}
