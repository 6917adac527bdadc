import FolioSystem

/// What is waiting to be committed (`folio status`).
public struct StoreStatus: Sendable {
  /// One table's pending work.
  public struct Table: Sendable {
    /// The table.
    public var name: String
    /// Ops recorded through Folio since the last commit.
    public var pendingOps: Int
    /// Documents whose files differ from the last commit.
    public var changedDocuments: [String]
    /// Documents edited outside Folio that no op explains yet.
    public var externalEdits: [String]
    /// Evicted documents (local copy removed, kept in git).
    public var evicted: [String]
  }
  /// Per table, in config order.
  public var tables: [Table]
  /// Documents that are not valid and would be left out of a commit.
  public var problems: [FolioError]
  /// Each way a document, committed or edited, breaks its table's schema
  /// (merges are not blocked by schemas, so they can bring such documents).
  public var schemaViolations: [FolioError] = []
  /// The tables of `folio.yaml` this partial replica does not hold (see
  /// ``Store/absentTables``); empty for a full replica.
  public var absentTables: [String] = []
  /// The current branch and commit.
  public var branch: String
  /// The commit HEAD points at, if any.
  public var head: String?
}
