import FolioJSON

/// Codable documents: read into, and write from, your own Swift types,
/// through Folio's ``JSONValueEncoder`` and ``JSONValueDecoder`` (no JSON
/// text in between, numbers exact).
///
/// ```swift
/// struct Todo: Codable, Sendable {
///     var id: String
///     var title: String
///     var done = false
///     var views = 0
///     var tags: [String] = []
/// }
/// let todos = store.collection("todos")
/// try todos.insert(Todo(id: "a", title: "Buy milk"))
/// let todo = try todos.findByID("a").exec(as: Todo.self)
/// let open = try todos.query().where("done == false").get(as: Todo.self)
/// ```
///
/// The pk comes from the table's key column (`id` unless `folio.yaml` says
/// otherwise). Nil optionals are written as `null`, so that an upsert of a
/// value whose field became nil clears the column.
extension DocumentCollection {
  /// Inserts `value`, or assigns its columns over the existing document with
  /// that pk. Columns the type does not know are left as they are.
  ///
  /// ```swift
  /// try todos.upsert(Todo(id: "a", title: "Buy milk"))
  /// ```
  /// - Returns: the pk (generated if the key column is missing or nil).
  /// - Throws: `INVALID_DOCUMENT` if `value` does not encode to an object.
  @discardableResult
  public func upsert<T: Encodable>(
    _ value: T, writeStrategy: WriteStrategy = .merge, encoder: JSONValueEncoder = JSONValueEncoder()
  ) throws -> String {
    try upsert(try encoder.encode(value), writeStrategy: writeStrategy)
  }

  /// Inserts `value` as a new document.
  ///
  /// ```swift
  /// try todos.insert(Todo(id: "a", title: "Buy milk"))
  /// ```
  /// - Returns: the pk (generated if the key column is missing or nil).
  /// - Throws: `LOCAL_CONSTRAINT` (with the table and pk) if a document with
  ///   that pk exists; `INVALID_DOCUMENT` if `value` is not an object.
  @discardableResult
  public func insert<T: Encodable>(_ value: T, encoder: JSONValueEncoder = JSONValueEncoder()) throws
    -> String
  {
    let json = try encoder.encode(value)
    return try store.write { try $0.insert(table: name, value: json) }
  }

  /// Inserts `value` as a new document; see ``insert(_:encoder:)-78uh5``.
  @discardableResult
  public func insert(_ value: JSONValue) throws -> String {
    try store.write { try $0.insert(table: name, value: value) }
  }
}

extension PendingIDSpecificOperation {
  /// The document decoded as `type`, or nil if there is none.
  ///
  /// ```swift
  /// let todo = try todos.findByID("a").exec(as: Todo.self)
  /// ```
  /// - Throws: `INVALID_JSON` if its file does not parse; `DecodingError`
  ///   if it does not decode as `type`.
  public func exec<T: Decodable>(as type: T.Type, decoder: JSONValueDecoder = JSONValueDecoder()) throws
    -> T?
  {
    try exec()?.decode(type, decoder: decoder)
  }
}
