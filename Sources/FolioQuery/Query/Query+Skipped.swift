import FolioCore
import FolioSystem

extension FolioError {
  /// Whether this says that a document file does not parse or holds no
  /// object: a file a person's editor left broken, which a query leaves
  /// out and names rather than failing on (see ``QueryCursor/skipped``).
  package var isUnreadableDocument: Bool {
    (code == .invalidJSON || code == .invalidDocument) && location != nil
  }
}

extension Query {
  /// The documents, in ascending order, and the document files left out
  /// because they do not parse.
  ///
  /// One broken file (a truncated save, a stray comma) never takes a
  /// query down: the other documents are answered as if it were not
  /// there, and it is added to `skipped` as an error at its
  /// `file:line:col`. ``get()-1xrqj`` does the same without saying which.
  ///
  /// ```swift
  /// var skipped: [FolioError] = []
  /// let open = try todos.query().where("done == false").get(skipped: &skipped)
  /// for file in skipped { print("left out: \(file)") }
  /// ```
  public func get(skipped: inout [FolioError]) throws -> [Document] {
    var cursor = try documents()
    var result: [Document] = []
    while let document = try cursor.next() { result.append(document) }
    skipped += cursor.skipped
    return result
  }
}
