import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem

/// The store as one commit left it, read straight from git's objects: no
/// checkout, and the working tree is never touched.
///
/// ```swift
/// let lastWeek = try store.snapshot(asOf: "7 days ago")
/// let todo = try lastWeek.findByID(table: "todos", pk: "t1")
/// let open = try lastWeek.get(store.collection("todos").query().where("done == false"))
/// ```
///
/// Tables are read as the current `folio.yaml` defines them (folder, key,
/// ordering). A query reads a table's documents from the commit's objects
/// without an index: in key order and unfiltered it reads only the page it
/// returns; otherwise it reads each document once and sorts them in
/// memory.
///
/// Confinement: a snapshot holds a libgit2 handle, so it is used on the
/// thread that made it and is not `Sendable`.
///
/// ## Topics
///
/// ### Reading
/// - ``findByID(table:pk:)``
/// - ``get(_:)``
/// - ``documents(_:)``
/// - ``pks(table:)``
///
/// ### The commit
/// - ``commit``
public final class StoreSnapshot {
  /// The commit read.
  public let commit: CommitInfo
  let store: Store
  private let repository: GitRepository
  private let tree: GitTree
  /// Reads a document's blob as a merge does: within the size limit, and
  /// a JSON object.
  private let reader: TreeMerge
  /// Each table's files at the commit, by pk, read once.
  private var listings: [String: [String: GitOID]] = [:]

  init(store: Store, repository: GitRepository, commit: GitCommit) throws {
    self.store = store
    self.repository = repository
    self.commit = commit.info
    self.tree = try commit.tree()
    self.reader = TreeMerge(repository: repository, config: store.config)
  }

  /// The document `pk` of `table` as the commit held it, or nil.
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_JSON` for a file that does not
  ///   parse at that commit.
  public func findByID(table name: String, pk: String) throws -> Document? {
    let table = try store.table(named: name)
    guard let object = try load(table: table, pk: pk) else { return nil }
    return Document(pk: pk, table: table.name, value: object)
  }

  /// The pks of `table`'s documents at the commit, in file-name order.
  public func pks(table name: String) throws -> [String] {
    let table = try store.table(named: name)
    return try listing(table).keys.sorted()
  }

  /// The documents `query` returns at the commit, in its order.
  public func get(_ query: Query) throws -> [Document] {
    var cursor = try documents(query)
    var result: [Document] = []
    while let document = try cursor.next() { result.append(document) }
    return result
  }

  /// A cursor over what `query` returns at the commit: the same ordering,
  /// bounds, limits and filter as on the working tree.
  public func documents(_ query: Query) throws -> QueryCursor {
    let table = try store.table(named: query.collection.name)
    let files = try listing(table)
    if repository.isPartialClone(of: "origin") {
      // The versions a partial clone lacks, in one fetch rather than one
      // each as the query reads them.
      try repository.fetchMissing(Array(files.values), remote: "origin", sshKey: store.sshKeyPath)
    }
    return try query.cursor(table: table, pks: Array(files.keys)) { [self] pk in
      try load(table: table, pk: pk)
    }
  }

  private func load(table: TableConfig, pk: String) throws -> JSONObject? {
    guard let id = try listing(table)[pk] else { return nil }
    let path = (try table.path(of: pk))
    return try reader.document(id, path: path)
  }

  private func listing(_ table: TableConfig) throws -> [String: GitOID] {
    if let known = listings[table.name] { return known }
    var files: [String: GitOID] = [:]
    for (name, id) in try tree.documentBlobs(of: table, repository: repository) {
      guard let pk = table.pk(fromDocumentName: name) else { continue }
      files[pk] = id
    }
    listings[table.name] = files
    return files
  }
}
