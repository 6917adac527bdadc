import FolioCore

/// Brings the order indexes up to date with every commit.
package struct OrderIndexObserver: CommitObserver {
  package init() {}

  package func storeDidCommit(_ store: Store, writes: [Journal.Write]) {
    Self.indexDocumentsWritten(writes, in: store)
  }

  /// The hook `commit` calls with the files a transaction wrote.
  static func indexDocumentsWritten(_ writes: [Journal.Write], in store: Store) {
    var byTable: [String: [(pk: String, bytes: [UInt8]?)]] = [:]
    for write in writes {
      guard let (table, pk) = store.config.document(atPath: store.relative(write.path)) else { continue }
      // A removal is told as empty bytes: nothing to parse.
      byTable[table.name, default: []].append((pk, write.new ?? []))
    }
    for (name, changes) in byTable {
      guard let table = store.config.table(named: name) else { continue }
      OrderIndexCache.documentsChanged(store: store, table: table, changes: changes)
    }
  }
}
