import FolioJSON
import FolioSystem

/// One way a document breaks its table's schema.
///
/// ```swift
/// let violation = schema.validate(.object(document)).first!
/// print(violation)        // views: expected integer, got string (schema todos.schema.json#/properties/views)
/// let error = violation.error(file: "data/todos/a.json", bytes: bytes)
/// print(error)            // data/todos/a.json:3:12: error: views: expected integer, got string (schema …)
/// ```
public struct SchemaViolation: Sendable, Hashable, CustomStringConvertible {
  /// The value at fault, as a path into the document: `views`, `meta.k`,
  /// `tags[2]`; `document` for the whole document.
  public var path: String
  /// What is wrong: `expected integer, got string`.
  public var message: String
  /// The subschema that refused it: the schema file's name and a pointer
  /// into it, `todos.schema.json#/properties/views`.
  public var schemaLocation: String
  /// Where in the document text to point: the value, or for a property
  /// that may not be there its name.
  var position: JSONPointer
  var atKey = false

  /// `path: message (schema location)`.
  public var description: String { "\(path): \(message) (schema \(schemaLocation))" }

  /// The violation as an error placed in the document's text: `file:line:col`
  /// of the value at fault in `bytes` (the file as saved, or the canonical
  /// bytes about to be written).
  public func error(file: String, bytes: [UInt8], table: String? = nil, pk: String? = nil) -> FolioError {
    let (line, column) = position.lineAndColumn(in: bytes, atKey: atKey)
    return FolioError(
      .schemaViolation, description, location: .init(file: file, line: line, column: column), table: table,
      pk: pk
    ).withExcerpt(from: bytes)
  }
}
