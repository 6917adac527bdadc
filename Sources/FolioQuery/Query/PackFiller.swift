import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// Writes a table's packed cache (``DocumentPack``) from documents Folio
/// has in hand anyway, so that the first scan or export after them reads
/// one file instead of every document:
/// - an index build from the files (``TableIndex``), when the table has no
///   pack yet;
/// - an import, from the documents it writes (`ImportPackRecorder`).
///
/// Records go in the order they are added. A record is only as good as the
/// rule every record of a pack follows: its stat data was not racy when its
/// bytes were known (``FileStat/isRacy(checkedAt:)``); a racy one is left
/// out, and that document is read from its file when a scan needs it.
package final class PackFiller {
  private let path: String
  private let temp: String
  private let lockPath: String
  private var fd: Int32
  private var pending: [UInt8]
  private var failed = false
  /// Records are written a megabyte at a time: memory stays flat.
  private static let writeThreshold = 1 << 20

  /// Starts a pack for `table` of `store` in a temp file beside its place;
  /// nil when the temp file cannot be made, or, unless `replacing`, when
  /// the table has a pack already.
  package convenience init?(store: Store, table: TableConfig, replacing: Bool) {
    self.init(
      path: PackedDocuments.path(store: store, table: table),
      lockPath: store.privateDirectory + "/index/lock", table: table, replacing: replacing)
  }

  init?(path: String, lockPath: String, table: TableConfig, replacing: Bool) {
    guard replacing || FileStat.of(path) == nil,
      (try? FileSystem.makeDirectories(FileSystem.split(path).directory)) != nil
    else { return nil }
    self.path = path
    self.lockPath = lockPath
    temp = path + ".fill"
    fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return nil }
    pending = DocumentPack.header(signature: PackedDocuments.signature(table))
  }

  deinit { discard() }

  /// Adds `document`, read from a file with stat data `stat` at `readAt`.
  func add(pk: String, document: JSONObject, stat: FileStat, readAt: Int64) {
    guard !stat.isRacy(checkedAt: readAt) else { return }
    add(pk: pk, compact: JSONValue.object(document).compactBytes(), stat: stat, checkedAt: readAt)
  }

  /// Adds a document as compact JSON (``JSONValue/compactBytes()``), known
  /// to be its file's content, with stat data `stat`, at `checkedAt`.
  package func add(pk: String, compact: some Collection<UInt8>, stat: FileStat, checkedAt: Int64) {
    guard !failed, !stat.isRacy(checkedAt: checkedAt) else { return }
    DocumentPack.encode(pk: pk, document: compact, stat: stat, checkedAt: checkedAt, into: &pending)
    if pending.count >= Self.writeThreshold { write() }
  }

  /// Puts the pack in place under the index lock: over the one there, if
  /// `replacing`; otherwise only where another process made none meanwhile.
  /// Nothing is put in place after a failed write.
  package func finish(replacing: Bool = false) {
    guard fd >= 0 else { return }
    write()
    close(fd)
    fd = -1
    IndexNames.withLock(lockPath, blocking: true) {
      if failed || (!replacing && FileStat.of(path) != nil) || rename(temp, path) != 0 { unlink(temp) }
    }
  }

  /// Drops what was written.
  package func discard() {
    guard fd >= 0 else { return }
    close(fd)
    fd = -1
    unlink(temp)
  }

  private func write() {
    if !failed && (try? FileSystem.writeAll(fd, pending, path: temp)) == nil { failed = true }
    pending.removeAll(keepingCapacity: true)
  }
}
