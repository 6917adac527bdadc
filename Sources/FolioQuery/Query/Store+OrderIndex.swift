import FolioCore
import FolioSystem
import Glibc

extension Store {
  /// Tells the order indexes that the documents `pks` of `table` were
  /// written or removed. Call it after writing document files directly
  /// (merges, sync). It is an optimisation only: an index also finds such
  /// changes by the files' stat data.
  func documentsChanged(table name: String, pks: [String]) {
    guard let table = config.table(named: name), !pks.isEmpty else { return }
    OrderIndexCache.documentsChanged(store: self, table: table, changes: pks.map { ($0, nil) })
  }

  /// Brings table `name`'s index files in `.git/folio/index/` in line with
  /// its order keys and `indexes:` now, rather than at the next query:
  /// files built for other paths (an index added or removed since) are
  /// built again from the documents.
  ///
  /// ```swift
  /// let store = try store.addIndex("owner", to: "todos")
  /// try store.buildIndexes(table: "todos")
  /// ```
  /// - Throws: `UNKNOWN_TABLE`, or what reading the folder throws.
  public func buildIndexes(table name: String) throws {
    let table = try self.table(named: name)
    _ = try OrderIndexCache.snapshot(store: self, table: table, contents: true)
  }

  /// Removes the index files in `.git/folio/index/` kept under table name
  /// `name`, which no table has any more (after `folio tables rename`).
  ///
  /// ```swift
  /// let (store, _) = try store.renameTable("todos", to: "tasks")
  /// try store.removeIndexFiles(ofFormerTable: "todos")
  /// ```
  public func removeIndexFiles(ofFormerTable name: String) throws {
    let stem = privateDirectory + "/index/" + IndexNames.fileStem(name)
    for suffix in [".base", ".log", ".docs"] where unlink(stem + suffix) != 0 && errno != ENOENT {
      throw FileSystem.error(errno, "unlink", path: stem + suffix)
    }
  }

  /// The hook `commit` calls with the files a transaction wrote.
  func indexDocumentsWritten(_ writes: [Journal.Write]) {
    var byTable: [String: [(pk: String, bytes: [UInt8]?)]] = [:]
    for write in writes {
      guard let (table, pk) = config.document(atPath: relative(write.path)) else { continue }
      // A removal is told as empty bytes: nothing to parse.
      byTable[table.name, default: []].append((pk, write.new ?? []))
    }
    for (name, changes) in byTable {
      guard let table = config.table(named: name) else { continue }
      OrderIndexCache.documentsChanged(store: self, table: table, changes: changes)
    }
  }
}

/// Brings the order indexes up to date with every commit.
package struct OrderIndexObserver: CommitObserver {
  package init() {}

  package func storeDidCommit(_ store: Store, writes: [Journal.Write]) { store.indexDocumentsWritten(writes) }
}
