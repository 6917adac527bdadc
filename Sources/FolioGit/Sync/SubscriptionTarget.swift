import FolioQuery

/// What a live ``Subscription`` keeps on this replica: one document, or
/// every document a query covers (its table, filter and range; a limit does
/// not narrow it).
public enum SubscriptionTarget: Sendable {
  /// The document `pk` of `table`, from `findByID(pk).subscribe()`.
  case document(table: String, pk: String)
  /// The documents a query covers, from `query().….subscribe()`.
  case query(Query)

  /// The table it is in.
  public var table: String {
    switch self {
    case .document(let table, _): table
    case .query(let query): query.collection.name
    }
  }
}
