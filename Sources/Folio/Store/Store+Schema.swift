extension Store {
  /// Refuses a transaction whose documents break their tables' schemas,
  /// before anything is written: `put`, `apply`, `update`, the HTTP bridge
  /// and conflict resolutions all commit through here. The error points
  /// into the bytes about to be written (the document's canonical form), as
  /// `data/todos/a.json:3:12: error: views: expected integer, got string (schema todos.schema.json#/properties/views)`.
  ///
  /// Evictions write nothing and are not checked; nor are edits an editor
  /// saved meanwhile, which are folded in as they are (the watcher reports
  /// those).
  /// - Throws: `SCHEMA_VIOLATION`.
  func checkSchemas(_ writes: [Journal.Write]) throws {
    for write in writes {
      if let missing = write.fold?.table.missingSchemaError { throw missing }
      guard let bytes = write.new, let fold = write.fold, let schema = fold.table.schema,
        let document = fold.new
      else { continue }
      guard let violation = schema.validate(.object(document)).first else { continue }
      throw violation.error(file: relative(write.path), bytes: bytes, table: fold.table.name, pk: fold.pk)
    }
  }

  /// The ways a document read from a table folder breaks its table's schema,
  /// each placed in `bytes` (the file as it is); empty without a schema.
  func schemaProblems(_ document: JSONObject, bytes: [UInt8], table: TableConfig, path: String)
    -> [FolioError]
  {
    guard let schema = table.schema else { return [] }
    return schema.validate(.object(document)).map { $0.error(file: path, bytes: bytes, table: table.name) }
  }
}

extension Store {
  /// A schema proposed from the table's documents (see
  /// ``SchemaInference``), for `folio schema TABLE --infer`. Files that do
  /// not parse are passed over (`fsck` reports them).
  ///
  /// ```swift
  /// let proposal = try store.inferSchema(table: "todos")
  /// print(proposal.canonicalString)
  /// ```
  /// - Throws: `UNKNOWN_TABLE`.
  public func inferSchema(table name: String) throws -> JSONValue {
    let table = try table(named: name)
    var inference = SchemaInference()
    let directory = directory(of: table)
    for file in (try FileSystem.list(directory) ?? []).sorted() where PrimaryKey.pk(fromFileName: file) != nil
    {
      guard let (_, object) = (try? readDocument(at: directory + "/" + file)) ?? nil else { continue }
      inference.add(object)
    }
    let kinds = table.columns
    return inference.schema(
      title: table.name, counters: Set(kinds.filter { $0.value == .counter }.keys),
      sets: Set(kinds.filter { $0.value == .set }.keys))
  }

  /// The schema in effect for a table: its file's text as it is.
  /// - Throws: `UNKNOWN_TABLE`; `NOT_FOUND` when the table has no schema.
  public func schemaText(table name: String) throws -> [UInt8] {
    let table = try table(named: name)
    guard let schema = table.schema else {
      throw FolioError(
        .notFound,
        "table '\(name)' has no schema; add 'schema: schemas/\(name).schema.json' to its entry in \(Config.fileName) (propose one with 'folio schema \(name) --infer')",
        table: name)
    }
    return schema.source
  }
}
