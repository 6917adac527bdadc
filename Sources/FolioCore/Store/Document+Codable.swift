import FolioJSON

/// Reading a document as Swift values.
///
/// ```swift
/// struct Todo: Codable { var id: String; var title: String; var views: Int }
/// if let doc = try todos.findByID("a").exec() {
///     let todo = try doc.decode(Todo.self)
///     let title = doc["title", as: String.self]
/// }
/// ```
extension Document {
  /// The whole document decoded as `type`, through ``JSONValueDecoder``
  /// (exact numbers; counters in either form the transform rules store).
  /// - Throws: `DecodingError` naming the coding path of the mismatch.
  public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONValueDecoder = JSONValueDecoder())
    throws -> T
  {
    try decoder.decode(type, from: .object(value))
  }

  /// The column `key` decoded as `type`, or nil when it is missing or of
  /// another type.
  ///
  /// ```swift
  /// let views = doc["views", as: Int.self] ?? 0
  /// ```
  public subscript<T: Decodable>(key: String, as type: T.Type) -> T? {
    value[key].flatMap { try? $0.decode(type) }
  }

  /// The value at `path` decoded as `type`, or nil when it is missing or of
  /// another type.
  public subscript<T: Decodable>(path: FieldPath, as type: T.Type) -> T? {
    value.value(at: path).flatMap { try? $0.decode(type) }
  }
}
