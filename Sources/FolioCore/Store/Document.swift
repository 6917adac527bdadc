import FolioJSON
import FolioSystem

/// A document as read from its file: a JSON object and its pk.
///
/// Two documents are equal when their pks and tables have the same bytes
/// and their values the same canonical form: pks that Swift's `==` would
/// call equal ("\u{E9}" and "e\u{301}") are two documents (issue 13).
public struct Document: Sendable, Hashable {
  /// The pk (also the file name and the value of the table's key column).
  public let pk: String
  /// The table it belongs to.
  public let table: String
  /// The document's columns.
  public let value: JSONObject

  /// Creates a document.
  public init(pk: String, table: String, value: JSONObject) {
    self.pk = pk
    self.table = table
    self.value = value
  }

  /// The column `key`, if present.
  public subscript(key: String) -> JSONValue? { value[key] }

  /// The value at a nested path, if present.
  public subscript(path: FieldPath) -> JSONValue? { value.value(at: path) }

  /// The whole document as a JSON value.
  public var json: JSONValue { .object(value) }

  /// Whether the two are the same document with the same content, pk and
  /// table compared by their bytes.
  public static func == (lhs: Document, rhs: Document) -> Bool {
    lhs.pk.utf8Equals(rhs.pk) && lhs.table.utf8Equals(rhs.table) && lhs.value == rhs.value
  }

  /// Hashes the pk's and table's bytes and the value, as `==` compares them.
  public func hash(into hasher: inout Hasher) {
    pk.hashUTF8(into: &hasher)
    table.hashUTF8(into: &hasher)
    hasher.combine(value)
  }

  /// The pk as a set or dictionary key.
  package var key: ExactKey { ExactKey(pk) }

  /// Whether `value`, found in a key column, names `pk`: the same string, or
  /// a number whose literal text is `pk` (as CSV imports produce).
  package static func keyMatches(_ value: JSONValue, pk: String) -> Bool {
    switch value {
    case .string(let text): text.utf8.elementsEqual(pk.utf8)
    case .number(let text): text == pk
    default: false
    }
  }
}
