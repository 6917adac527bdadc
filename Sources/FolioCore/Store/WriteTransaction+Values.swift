import FolioJSON
import FolioSystem

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

extension WriteTransaction {
  /// Inserts `value` as a new document.
  /// - Returns: the pk (generated if the key column is missing or nil).
  /// - Throws: `LOCAL_CONSTRAINT` if a document with that pk exists.
  @discardableResult
  public func insert(table: String, value: JSONValue) throws -> String {
    let config = try store.table(named: table)
    guard case .object(var object) = value else {
      throw FolioError(
        .invalidDocument, "a document must be a JSON object, not \(value.kindName)", table: table)
    }
    guard let keyColumn = config.key else {
      // The pk lives in the file name only, so the value is stored as given.
      let pk = PrimaryKey.generate()
      try apply(table: table, pk: pk, op: .insert, columns: object)
      return pk
    }
    let pk: String
    switch object[keyColumn] {
    case .string(let text)?: pk = text
    case .number(let text)?: pk = text
    case nil, .null?:
      pk = PrimaryKey.generate()
      object[keyColumn] = .string(pk)
    case let other?:
      throw FolioError(
        .localConstraint, "key column '\(keyColumn)' must be a string or a number, not \(other.kindName)",
        table: table)
    }
    // As a JSONObject: a dictionary would merge twin keys into one column.
    try apply(table: table, pk: pk, op: .insert, columns: object)
    return pk
  }
}
