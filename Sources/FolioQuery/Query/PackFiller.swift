import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// Writes a table's packed cache (``DocumentPack``) from the documents an
/// index build reads anyway, when the table has none yet: the first export
/// or scan after an import then reads one file instead of every document a
/// second time.
///
/// The records go in the order the build reads them (the folder's), which
/// is the new base's own order; the first scan in another order writes the
/// pack again in its order (``PackedDocuments``). A record is kept only if
/// its stat data was not racy when its bytes were read, the rule every
/// record of a pack follows.
final class PackFiller {
  private let path: String
  private let temp: String
  private var fd: Int32
  private var pending: [UInt8]
  private var failed = false

  /// Starts a pack for `table` at `path`; nil when one is already there or
  /// the temp file cannot be made.
  init?(path: String, table: TableConfig) {
    guard FileStat.of(path) == nil,
      (try? FileSystem.makeDirectories(FileSystem.split(path).directory)) != nil
    else { return nil }
    self.path = path
    temp = path + ".fill"
    fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return nil }
    pending = DocumentPack.header(signature: PackedDocuments.signature(table))
  }

  deinit {
    if fd >= 0 {
      close(fd)
      unlink(temp)
    }
  }

  /// Adds `document`, read from a file with stat data `stat` at `readAt`.
  func add(pk: String, document: JSONObject, stat: FileStat, readAt: Int64) {
    guard !failed, !stat.isRacy(checkedAt: readAt) else { return }
    DocumentPack.encode(
      pk: pk, document: JSONValue.object(document).compactBytes(), stat: stat, checkedAt: readAt,
      into: &pending)
    if pending.count >= PackedDocuments.appendThreshold { write() }
  }

  /// Puts the pack in place, under the index lock at `lockPath`, unless
  /// another process made one meanwhile or a write failed.
  func finish(lockPath: String) {
    write()
    close(fd)
    fd = -1
    IndexNames.withLock(lockPath, blocking: true) {
      if failed || FileStat.of(path) != nil || rename(temp, path) != 0 { unlink(temp) }
    }
  }

  private func write() {
    if !failed && (try? FileSystem.writeAll(fd, pending, path: temp)) == nil { failed = true }
    pending.removeAll(keepingCapacity: true)
  }
}
