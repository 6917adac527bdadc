import FolioJSON
import FolioSystem

/// A table of a store, by name.
///
/// ```swift
/// let todos = store.collection("todos")
/// let doc = try todos.findByID("3f2a").exec()
/// ```
public struct DocumentCollection: Sendable {
  /// The store.
  public let store: Store
  /// The table's name.
  public let name: String

  /// The operations on one document (as in Ditto's `findByID` API).
  public func findByID(_ pk: String) -> PendingIDSpecificOperation {
    PendingIDSpecificOperation(collection: self, pk: pk)
  }

  /// Inserts or merges `value`, keyed by the table's key column.
  ///
  /// A value with no key column gets a generated pk: 26 characters that sort
  /// by creation time and are unique across replicas (see
  /// ``PrimaryKey/generate()``).
  /// - Returns: the pk.
  @discardableResult
  public func upsert(_ value: JSONValue, writeStrategy: WriteStrategy = .merge) throws -> String {
    try store.write { try $0.upsert(table: name, value: value, writeStrategy: writeStrategy) }
  }

  /// The pks of every document in the table, in no particular order.
  /// Files that are not documents (temp files, other names) are skipped.
  public func allPKs() throws -> [String] {
    let table = try store.table(named: name)
    return (try table.listDocumentNames(in: store.directory(of: table)) ?? []).compactMap {
      table.pk(fromDocumentName: $0)
    }
  }

  /// The number of documents in the table.
  public func count() throws -> Int { try allPKs().count }
}

/// The operations on one document, as returned by
/// ``DocumentCollection/findByID(_:)`` (as in Ditto's `findByID` API).
public struct PendingIDSpecificOperation: Sendable {
  /// The table.
  public let collection: DocumentCollection
  /// The document's pk.
  public let pk: String

  package init(collection: DocumentCollection, pk: String) {
    self.collection = collection
    self.pk = pk
  }

  /// The document, or nil if there is none.
  /// - Throws: `INVALID_JSON` at `file:line:col` if its file is not valid JSON.
  public func exec() throws -> Document? {
    let store = collection.store
    let table = try store.table(named: collection.name)
    guard let read = try store.readDocument(at: try store.documentPath(table: table, pk: pk)) else {
      return nil
    }
    return Document(pk: pk, table: table.name, value: read.object)
  }

  /// Removes the document. The removal is recorded, so it syncs.
  /// - Returns: true if the document was found and removed.
  @discardableResult
  public func remove() throws -> Bool {
    try collection.store.write { try $0.remove(table: collection.name, pk: pk) }
  }

  /// Removes the local copy only; the removal never syncs as a delete.
  ///
  /// git's index entry is marked skip-worktree at once, so plain `git
  /// status` and `git commit -a` see no deletion either. A document that a live subscription covers can be evicted too, but
  /// the subscription brings it back on the next `sync` (Ditto's `findByID` API
  /// `subscribe`); cancel the subscription first to keep it away.
  /// - Returns: true if the document was found and evicted.
  @discardableResult
  public func evict() throws -> Bool {
    try collection.store.write { try $0.evict(table: collection.name, pk: pk) }
  }

  /// Calls `body` with the document (nil if missing) and records its changes
  /// as one mutation.
  /// - Returns: what changed; empty if the document is missing.
  @discardableResult
  public func update(_ body: (MutableDocument?) throws -> Void) throws -> [UpdateResult] {
    try collection.store.write { try $0.update(table: collection.name, pk: pk, body) }
  }
}
