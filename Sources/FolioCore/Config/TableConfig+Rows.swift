import FolioJSON
import FolioSystem

extension TableConfig {
  /// The column that carries a table's pk in rows when the table keeps it
  /// in the file name only (`key: null`): the rows of `folio query`,
  /// `folio export` and `folio import`.
  ///
  /// The leading `_` marks a member that is not in the document, and keeps
  /// clear of the `id` such documents often hold for their own use.
  public static let nameKeyColumn = "_key"

  /// The column that carries the pk in rows: the key column, or
  /// `column` (default ``nameKeyColumn``) when the table keeps its pk in the
  /// file name only.
  public func rowKey(_ column: String? = nil) -> String { key ?? column ?? Self.nameKeyColumn }

  /// `document` as a row: for a table that keeps its pk in the file name,
  /// the pk first under ``rowKey(_:)``, then the document's members; for a
  /// table with a key column, the document itself, which holds it already.
  ///
  /// - Throws: `LOCAL_CONSTRAINT` when the document has a member of that
  ///   name of its own, which the row could not carry beside the pk.
  public func row(_ document: JSONObject, pk: String, column: String? = nil) throws -> JSONObject {
    guard key == nil else { return document }
    let name = rowKey(column)
    if document[name] != nil {
      throw FolioError(
        .localConstraint,
        "document '\(pk)' of table '\(self.name)' has a member '\(name)' of its own, "
          + "so a row cannot carry the pk under that name; export and import take --pk NAME to use another",
        table: self.name, pk: pk)
    }
    var row: JSONObject = [name: .string(pk)]
    for (member, value) in document { row[member] = value }
    return row
  }
}
