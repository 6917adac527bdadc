import FolioCore
import FolioQuery

/// How queries reach this store's publisher, and start an index daemon
/// when they find none: the index daemon layer's side of Query's
/// ``IndexPublisherLink``, registered by the composition root.
package struct IndexDaemonLink: IndexPublisherLink {
  package init() {}

  package func isPublishing(indexDirectory: String) -> Bool {
    IndexPublisher.isPublishing(indexDirectory: indexDirectory)
  }

  package func ask(indexDirectory: String, table: String, signature: String, reached: inout Bool)
    -> PublisherAnswer?
  {
    IndexPublisherClient.ask(
      indexDirectory: indexDirectory, table: table, signature: signature, reached: &reached)
  }

  /// Starts a daemon only for a table whose full check is expensive
  /// (``IndexPublisher/onDemandDocuments``): a small store's check costs
  /// less than a process is worth, and a query should not leave a process
  /// behind for nothing. The count decides, not the check's time, which
  /// would start daemons on a loaded machine and not on a calm one. A
  /// folder the check lists (a hashed or nested table's) counts as four
  /// documents: it is opened, read and closed, where a document file takes
  /// one stat. So a nested table of 10,000 documents in 4,352 folders
  /// starts one, and a hashed one of that size does not.
  package func publisherMissed(store: Store, documents: Int) {
    let folders = store.config.tables.reduce(0) { $0 + $1.layout.folderCount }
    guard documents + 4 * min(documents, folders) >= IndexPublisher.onDemandDocuments else { return }
    IndexPublisher.publisherMissed(store: store)
  }

  package func changedFiles(indexDirectory: String, since token: String?, reached: inout Bool)
    -> ChangedFiles?
  {
    // A publisher in this process answers from its own thread; asking it
    // over the socket is fine, as the journal takes no lock a caller holds.
    IndexPublisherClient.changedFiles(indexDirectory: indexDirectory, since: token, reached: &reached)
  }
}
