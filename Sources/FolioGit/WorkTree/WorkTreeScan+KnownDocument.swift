import FolioCore
import FolioJSON
import FolioSystem

extension WorkTreeScan {
  /// The state Folio last wrote or recorded for a document: its version at
  /// HEAD with this replica's ops since HEAD replayed on top.
  ///
  /// A file that differs from it was edited outside Folio. `folio commit`
  /// and `folio watch` both compare against it, so an edit is recorded once,
  /// by whichever sees it first, and Folio's own writes (which log their op
  /// before touching the file) are never mistaken for edits.
  /// - Parameters:
  ///   - headBlob: the document's blob at HEAD, if it has one.
  ///   - ownOps: this replica's uncommitted ops on the document, in log order.
  package func knownDocument(
    table: TableConfig, pk: String, path: String, headBlob: GitOID?, ownOps: [Op], repository: GitRepository
  ) throws -> JSONObject? {
    let base = try headBlob.flatMap { try parseObject(repository.blob($0), path: path) }
    return DocumentResolver(table: table).replay(ownOps, onto: base, pk: pk)
  }

  /// Parses a document file someone edited and checks that it can be
  /// recorded: a JSON object whose key column, if it has one, names `pk`.
  /// A file without its key column still names its pk: the result holds
  /// the column, as Folio writes it, so no op unsets it.
  /// - Parameter path: the file relative to the root, for messages.
  /// - Throws: `INVALID_JSON` at `path:line:col`, or `INVALID_DOCUMENT` for a
  ///   value that is not an object or a key column that disagrees with the
  ///   file name (pointing at the key member).
  package func parseEditedDocument(_ bytes: [UInt8], table: TableConfig, pk: String, path: String) throws
    -> JSONObject
  {
    let value = try JSONValue(parsing: bytes, file: path)
    guard case .object(let object) = value else {
      throw FolioError(
        .invalidDocument, "a document must be a JSON object, not \(value.kindName)",
        location: .init(file: path, line: 1, column: 1), table: table.name, pk: pk)
    }
    guard let keyColumn = table.key else { return object }
    if let key = object[keyColumn], !Document.keyMatches(key, pk: pk) {
      let (line, column) = Store.position(ofMember: keyColumn, in: bytes)
      throw FolioError(
        .invalidDocument,
        "column '\(keyColumn)' is \(key.compactString) but the file name says the pk is '\(pk)'; rename the file or fix the column",
        location: .init(file: path, line: line, column: column), table: table.name, pk: pk)
    }
    var document = object
    if document[keyColumn] == nil { document[keyColumn] = .string(pk) }
    return document
  }

  /// The blob's document, or nil when it does not hold a JSON object.
  func parseObject(_ bytes: [UInt8], path: String) throws -> JSONObject? {
    guard case .object(let object) = try JSONValue(parsing: bytes, file: path) else { return nil }
    return object
  }
}
