import Glibc

extension DocumentPack {
  /// Writes a whole new pack as its records come, a few megabytes at a
  /// time, and puts it in place at the end only if the table still has
  /// none: for the first index build of a table, which reads every
  /// document anyway (``TableIndex``), so that the first scan or export
  /// after an import does not read every file a second time.
  final class Writer {
    private let path: String
    private let temp: String
    private let lockPath: String
    private var fd: Int32
    private var pending: [UInt8]

    /// Starts a pack at `path` (`signature` as ``PackedDocuments`` builds
    /// it); nil when one is there already or the temp file cannot be made.
    init?(path: String, signature: String, lockPath: String) {
      guard FileStat.of(path) == nil else { return nil }
      self.path = path
      self.lockPath = lockPath
      // The first build of the table's first index makes the folder.
      try? FileSystem.makeDirectories(FileSystem.split(path).directory)
      temp = path + ".new-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
      fd = Glibc.open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
      guard fd >= 0 else { return nil }
      pending = DocumentPack.header(signature: signature)
    }

    /// Adds a document read with stat data `stat` at `checkedAt`; a racy
    /// one is left out, as a pack could never use it.
    func add(pk: String, document: JSONObject, stat: FileStat, checkedAt: Int64) {
      guard fd >= 0, !stat.isRacy(checkedAt: checkedAt) else { return }
      DocumentPack.encode(
        pk: pk, document: JSONValue.object(document).compactBytes(), stat: stat, checkedAt: checkedAt,
        into: &pending)
      if pending.count >= 4 << 20 { write() }
    }

    /// Puts the pack in place (unless another appeared meanwhile); any
    /// failure leaves the table without one, to be filled by a later scan.
    func finish() {
      write()
      guard fd >= 0 else { return }
      close(fd)
      fd = -1
      IndexNames.withLock(lockPath, blocking: false) {
        if FileStat.of(path) == nil { rename(temp, path) }
      }
      unlink(temp)
    }

    private func write() {
      guard fd >= 0, !pending.isEmpty else { return }
      if (try? FileSystem.writeAll(fd, pending, path: temp)) == nil {
        close(fd)
        fd = -1
      }
      pending.removeAll(keepingCapacity: true)
    }

    deinit {
      if fd >= 0 {
        close(fd)
        unlink(temp)
      }
    }
  }
}
