import FolioJSON
import FolioSystem

extension Config {
  /// A document of `count` bytes at `path` past the store's limit
  /// (`limits: document:`), as `fsck` and `folio watch` report it; nil
  /// within it.
  package func sizeProblem(_ count: Int, table: TableConfig, path: String) -> FolioError? {
    let limit = limits.documentBytes
    guard count > limit else { return nil }
    return FolioError(
      .tooLarge,
      "\(count) bytes, more than the store's limit of \(limit) (\(ByteSize.format(limit))); another replica's merge cannot read it: make it smaller, or remove it",
      location: .init(file: path, line: 1, column: 1), table: table.name,
      remedy: .removeDocument(table: table.name))
  }

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
