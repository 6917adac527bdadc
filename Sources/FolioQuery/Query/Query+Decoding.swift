import FolioJSON

extension Query {
  /// The documents, in order, decoded as `type`.
  ///
  /// ```swift
  /// let page = try todos.query().orderBy(child: "lastUpdate").limitToFirst(20).get(as: Todo.self)
  /// ```
  /// - Throws: as ``get()-1xrqj``; `DecodingError` for a document that does not
  ///   decode as `type`.
  public func get<T: Decodable>(as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder()) throws
    -> [T]
  {
    try get().map { try $0.decode(type, decoder: decoder) }
  }
}
