extension WriteTransaction {
  /// ``apply(table:pk:op:columns:transforms:)`` with plain Swift values as
  /// columns.
  ///
  /// ```swift
  /// try store.write { tx in try tx.apply(table: "todos", pk: "a", op: .upsert, columns: ["title": title]) }
  /// ```
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: any JSONRepresentable],
    transforms: [String: JSONValue] = [:]
  ) throws -> [UpdateResult] {
    try apply(table: table, pk: pk, op: op, columns: try columns.jsonValues(), transforms: transforms)
  }
}
