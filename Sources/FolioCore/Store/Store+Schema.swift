import FolioJSON
import FolioSystem

extension Store {
  /// Refuses a transaction whose documents break their tables' schemas,
  /// before anything is written: `put`, `apply`, `update`, the HTTP bridge
  /// and conflict resolutions all commit through here. A document whose
  /// bytes are in `checked` has its verdict there; those checked here are
  /// added. The error points into the bytes about to be written (the
  /// document's canonical form), as
  /// `data/todos/a.json:3:12: error: views: expected integer, got string (schema todos.schema.json#/properties/views)`.
  ///
  /// Evictions write nothing and are not checked; nor are edits an editor
  /// saved meanwhile, which are folded in as they are (the watcher reports
  /// those).
  /// - Throws: `SCHEMA_VIOLATION`.
  func checkSchemas(_ writes: [Journal.Write], checked: inout [String: CheckedDocument]) throws {
    for write in writes {
      if let missing = write.fold?.table.missingSchemaError { throw missing }
      guard let bytes = write.new, let fold = write.fold, let schema = fold.table.schema,
        let document = fold.new
      else { continue }
      if let known = checked[write.path], known.bytes == bytes {
        if let violation = known.violation { throw violation }
        continue
      }
      let violation = schema.validate(.object(document)).first.map {
        $0.error(file: relative(write.path), bytes: bytes, table: fold.table.name, pk: fold.pk)
      }
      checked[write.path] = CheckedDocument(bytes: bytes, violation: violation)
      if let violation { throw violation }
    }
  }

  /// A document of `count` bytes at `path` past the store's limit
  /// (`limits: document:`), as `fsck` and `folio watch` report it; nil
  /// within it.
  package func sizeProblem(_ count: Int, table: TableConfig, path: String) -> FolioError? {
    let limit = config.limits.documentBytes
    guard count > limit else { return nil }
    return FolioError(
      .tooLarge,
      "\(count) bytes, more than the store's limit of \(limit) (\(ByteSize.format(limit))); another replica's merge cannot read it: make it smaller, or remove it",
      location: .init(file: path, line: 1, column: 1), table: table.name,
      remedy: .removeDocument(table: table.name))
  }

  /// Runs `body` once before the store lock is taken, and checks what it
  /// would write against the tables' schemas there, so that the lock is
  /// held for the durability point alone: a schema check is linear in the
  /// document, but the document is input Folio does not control. The
  /// documents checked are returned by path with their bytes and verdict;
  /// the locked run checks only documents whose bytes differ (another
  /// writer got in between).
  ///
  /// A store without schemas skips it. An error from `body` here (it read
  /// files another writer was changing) is left to the locked run to give.
  /// - Throws: `SCHEMA_VIOLATION`, before the lock, with nothing written.
  func checkSchemasBeforeLocking(_ body: (WriteTransaction) throws -> some Any) throws -> [String:
    CheckedDocument]
  {
    guard config.tables.contains(where: { $0.schema != nil || $0.schemaMissing }) else { return [:] }
    let transaction = WriteTransaction(store: self, lastHLC: try lastHLC())
    do {
      _ = try body(transaction)
    } catch {
      // What the body checked itself (a batch refusing one request) is kept.
      return transaction.checkedWrites
    }
    try checkSchemas(transaction.stagedWrites(), checked: &transaction.checkedWrites)
    return transaction.checkedWrites
  }
}

/// A document's bytes and what its table's schema said of them, so that a
/// transaction run again (under the lock, or after a retry) does not check
/// the same bytes twice.
package struct CheckedDocument: Sendable {
  var bytes: [UInt8]
  /// The first violation; nil when the document passed.
  var violation: FolioError?
}

extension Store {
  /// The ways a document read from a table folder breaks its table's schema
  /// or the store's size limit, each placed in `bytes` (the file as it is);
  /// empty when it breaks neither.
  package func schemaProblems(_ document: JSONObject, bytes: [UInt8], table: TableConfig, path: String)
    -> [FolioError]
  {
    if let problem = sizeProblem(bytes.count, table: table, path: path) { return [problem] }
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
    for file in (try table.listDocumentNames(in: directory) ?? []).sorted()
    where table.pk(fromDocumentName: file) != nil {
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
        "table '\(name)' has no schema; add 'schema: schemas/\(name).schema.json' to its entry in \(Config.fileName)",
        table: name, remedy: .inferSchema(table: name))
    }
    return schema.source
  }
}
