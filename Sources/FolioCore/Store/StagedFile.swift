import FolioSystem
import Glibc

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
