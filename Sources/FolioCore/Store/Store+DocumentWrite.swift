import FolioJSON
import FolioSystem
import Glibc

extension Store {
  /// How many edits in a row one document write folds in before it gives
  /// up and leaves the file as the editor saved it.
  private static let foldLimit = 64

  /// Puts one document of a committing transaction in place without ever
  /// overwriting a save another program made after the transaction read the
  /// file.
  ///
  /// The new file is swapped in with `renameat2(RENAME_EXCHANGE)`, so what
  /// it replaced is caught at the old name, atomically; if that is not the
  /// content the transaction read, an editor saved in between: its change
  /// is diffed through the column kinds, applied on top, logged as an op of
  /// its own, and the result swapped in again. A new file goes in with
  /// `RENAME_NOREPLACE`, which fails if an editor created it meanwhile. On
  /// a file system without `renameat2` the check is a read right before a
  /// plain rename.
  /// - Returns: the ops of the edits folded in, in order.
  ///
  /// With `spares` (a deferred write), the new content goes into a spare
  /// file, if one is ready, which is swapped in from the spares' folder;
  /// the file it replaces, or the temp file's, is kept as a spare.
  func placeDocument(
    _ write: Journal.Write, in dirfd: Int32, name: String, sync: Bool, after last: HLC?,
    spares: SpareFiles? = nil
  ) throws -> [Op] {
    let placement = DocumentPlacement(
      store: self, write: write, dirfd: dirfd, name: name, sync: sync, last: last, spares: spares)
    // An edit saved before this point is folded in before anything moves.
    let current = try placement.read()
    if current.map({ FNV.hex($0) }) != placement.expected && !placement.foldIn(current) {
      return placement.folds
    }
    for _ in 0..<Store.foldLimit {
      if try placement.attempt() { break }
    }
    return placement.folds
  }
}

/// A document's new content, written to a file of its own and ready to be
/// renamed in: the temp file next to the document, or a spare
/// (``SpareFiles``).
struct StagedFile {
  let folder: Int32
  let name: String
  /// The temp file's path, for errors.
  let path: String
  let length: Int
  let isSpare: Bool

  /// Writes `content` over the zeros of `spare`; nil if it is gone.
  static func spare(_ spare: SpareFiles.Spare, in folder: Int32, _ content: [UInt8], path: String) throws
    -> StagedFile?
  {
    let fd = openat(folder, spare.name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    try FileSystem.writeAll(fd, content, path: path)
    if content.count < spare.length {
      try FileSystem.syscall("ftruncate", path: path) { ftruncate(fd, off_t(content.count)) }
    }
    return StagedFile(folder: folder, name: spare.name, path: path, length: content.count, isSpare: true)
  }
}
