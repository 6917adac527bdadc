import Synchronization

/// Transactions committed with their flush deferred: each one's journal
/// record is durable (its durability point), its op-log lines and
/// documents are written but not yet flushed, and the journal keeps every
/// record until a checkpoint flushes the file system once and empties it.
///
/// Changed only with the store lock held.
struct DeferredFlush {
  /// The journal file's size and last line after the last record this
  /// process appended: anything else means another writer has redone and
  /// emptied it (flushing these files) or written its own.
  var journalSize: Int
  var trailer: [UInt8]
  /// Where the last record's op-log lines end: the next record starts
  /// there.
  var logEnd: Int
  var records: Int
  /// Which run of records this is (a new one starts once the journal has
  /// been emptied), so that a checkpoint whose flush began in one run
  /// drops nothing of the next.
  var run: Int

  private static let runs = Mutex(0)

  static func nextRun() -> Int {
    runs.withLock { count in
      count += 1
      return count
    }
  }
}
