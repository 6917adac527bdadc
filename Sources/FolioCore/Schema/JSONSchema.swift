import FolioJSON
import FolioSystem

/// A table's JSON Schema: the draft 2020-12 subset that checking documents
/// needs, read from a file in the store (`schema:` in a table's entry in
/// `folio.yaml`).
///
/// The keywords it checks are `type`, `properties`, `required`,
/// `additionalProperties`, `items`, `enum`, `const`, `minimum`, `maximum`,
/// `minLength`, `maxLength`, `pattern`, `format: date-time`, `$ref` to a
/// place in the same file, `$defs`, `anyOf` and `oneOf`; `true` and `false`
/// are schemas too. It also takes the keywords that only annotate (`$schema`
/// for draft 2020-12, `$id` and `$comment` at the top, `title`,
/// `description`, `default`, `examples`, `deprecated`, `readOnly`,
/// `writeOnly`). Any other keyword is refused when the file is read, with
/// its `file:line:col`: a keyword that was silently skipped would let
/// through the documents it was written to stop.
///
/// ```swift
/// let schema = try JSONSchema(bytes: Array(#"{"properties": {"views": {"type": "integer"}}}"#.utf8),
///                             file: "schemas/todos.schema.json")
/// for violation in schema.validate(["views": "10"]) {
///   print(violation)  // views: expected integer, got string (schema todos.schema.json#/properties/views)
/// }
/// ```
public struct JSONSchema: Sendable, Hashable {
  /// The file, as `folio.yaml` names it (relative to the store root).
  public let file: String
  /// The file's bytes.
  public let source: [UInt8]
  /// The compiled subschemas; the whole file's schema is the first.
  let nodes: [Node]

  /// The largest schema file read: a real one is a few kilobytes.
  public static let maximumFileBytes = 1 << 20

  /// The draft this subset follows, as `$schema` names it.
  public static let draft = "https://json-schema.org/draft/2020-12/schema"

  /// Reads and compiles a schema.
  /// - Parameters:
  ///   - bytes: the file's text.
  ///   - file: how errors and violations name the file.
  /// - Throws: `INVALID_JSON` for text that does not parse, `INVALID_CONFIG`
  ///   with the keyword's `file:line:col` for a keyword outside the subset,
  ///   a value of the wrong shape, a `$ref` that names nothing in the file
  ///   or that loops back to itself without reaching a value.
  public init(bytes: [UInt8], file: String) throws {
    if bytes.count > Self.maximumFileBytes {
      throw FolioError(
        .tooLarge, "the schema file is larger than \(Self.maximumFileBytes >> 20) MiB",
        location: .init(file: file, line: 1, column: 1))
    }
    let value = try JSONValue(parsing: bytes, file: file)
    self.file = file
    self.source = bytes
    var compiler = SchemaCompiler(file: file, source: bytes, root: value)
    self.nodes = try compiler.compile()
  }

  /// The file name as violations cite it: its last component
  /// (`todos.schema.json`).
  public var fileName: String { String(file.split(separator: "/").last ?? Substring(file)) }

  /// Equal when read from the same file with the same bytes.
  public static func == (a: JSONSchema, b: JSONSchema) -> Bool { a.file == b.file && a.source == b.source }

  /// Hashes the file and its bytes.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(file)
    hasher.combine(source)
  }
}
