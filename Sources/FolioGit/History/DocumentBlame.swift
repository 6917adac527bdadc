import FolioCore
import FolioJSON

/// What ``Store/blame(table:pk:)`` found: for each leaf of a document, the
/// operation that set it and the commit that brought that operation.
public struct DocumentBlame: Sendable {
  /// The table.
  public var table: String
  /// The document's pk.
  public var pk: String
  /// One entry per leaf of the document as the working tree holds it, in
  /// path order; empty when there is no such document.
  public var fields: [FieldBlame]

  /// Creates a document's blame.
  public init(table: String, pk: String, fields: [FieldBlame]) {
    self.table = table
    self.pk = pk
    self.fields = fields
  }
}
