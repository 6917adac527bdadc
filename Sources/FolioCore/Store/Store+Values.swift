import FolioJSON

extension Store {
  /// ``apply(table:pk:op:columns:transforms:)`` with plain Swift values as
  /// columns.
  ///
  /// ```swift
  /// let title = "Buy milk"
  /// try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["title": title, "views": 0])
  /// ```
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: any JSONRepresentable],
    transforms: [String: JSONValue] = [:]
  ) throws -> [UpdateResult] {
    try apply(table: table, pk: pk, op: op, columns: try columns.jsonValues(), transforms: transforms)
  }
}
