import Synchronization

/// How many document files queries have read in this process, per table
/// folder (tests use it to check that an indexed page reads only what it
/// returns).
enum QueryStatistics {
  private static let reads = Mutex<[String: Int]>([:])
  static func countRead(folder: String) { reads.withLock { $0[folder, default: 0] += 1 } }
  static func documentsRead(folder: String) -> Int { reads.withLock { $0[folder] ?? 0 } }
}

/// The order indexes this process has loaded, one per store and table, so
/// that a second query does not read the base file again. Each is checked
/// against the files on every use.
enum OrderIndexCache {
  // TableIndex is not Sendable: it is only touched inside this lock.
  private static let indexes = Mutex<[String: TableIndex]>([:])

  /// A checked view of `table`'s index.
  /// - Parameter contents: whether document contents matter (see
  ///   ``TableIndex/verify(contents:)``).
  static func snapshot(store: Store, table: TableConfig, contents: Bool) throws -> IndexSnapshot {
    try indexes.withLock { indexes in
      let index = try self.index(in: &indexes, store: store, table: table)
      try index.load()
      try index.verify(contents: contents)
      return IndexSnapshot(index)
    }
  }

  /// Tells the index of `table` that the documents in `changes` were written
  /// or removed: each with its new bytes if known (empty for a removal),
  /// else nil to read the file. This is the hook for `Store.commit` and for
  /// code that writes document files directly (merges). Only an index
  /// already built is updated; the next query finds anything this misses by
  /// stat data.
  static func documentsChanged(store: Store, table: TableConfig, changes: [(pk: String, bytes: [UInt8]?)]) {
    indexes.withLock { indexes in
      guard let index = try? self.index(in: &indexes, store: store, table: table),
        (try? index.load(buildIfMissing: false)) == true
      else { return }
      var records: [IndexLog.Record] = []
      for (pk, known) in changes {
        guard let path = try? store.documentPath(table: table, pk: pk) else { continue }
        let checkedAt = FileStat.now()
        guard let stat = FileStat.of(path) else {
          records.append(.document(pk: pk, entry: nil))
          continue
        }
        let object: JSONObject?
        if let known, !known.isEmpty {
          object = (try? JSONValue(parsing: known))?.objectValue
        } else {
          object = (try? store.readDocument(at: path))??.object
        }
        // Unreadable: leave it to the next query's check, which reports it.
        guard let object else { continue }
        records.append(
          .document(
            pk: pk, entry: IndexEntry(stat: stat, checkedAt: checkedAt, values: index.values(of: object))))
      }
      if !records.isEmpty { index.record(records, persist: true) }
    }
  }

  private static func index(in indexes: inout [String: TableIndex], store: Store, table: TableConfig) throws
    -> TableIndex
  {
    let key = store.rootPath + "\u{0}" + table.name
    if let index = indexes[key], index.table == table { return index }
    let index = TableIndex(
      table: table, folder: store.directory(of: table), indexDirectory: store.privateDirectory + "/index")
    indexes[key] = index
    return index
  }
}

/// An immutable view of a table's index after a check: what a query runs on,
/// outside the cache's lock.
struct IndexSnapshot: Sendable {
  let base: IndexBase?
  let overridden: [Bool]
  let overlay: [(pk: String, entry: IndexEntry)]
  let keys: [FieldPath]

  init(_ index: TableIndex) {
    base = index.base
    overridden = index.overridden
    overlay = index.overlay.values.compactMap { item in item.entry.map { (item.pk, $0) } }
    keys = index.keys
  }

  /// The runs that hold the documents in the order of key `key` (nil: pk).
  func runs(key: Int?, constant: OrderValue) -> [any OrderedRun] {
    var runs: [any OrderedRun] = []
    if let base { runs.append(BaseRun(base: base, key: key, constant: constant, overridden: overridden)) }
    if !overlay.isEmpty {
      runs.append(
        ArrayRun(
          sorting: overlay.map { item in (key.map { OrderValue(item.entry.values[$0]) } ?? constant, item.pk)
          }))
    }
    return runs
  }
}
