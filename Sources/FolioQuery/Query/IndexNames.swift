import FolioCore
import FolioSystem
import Glibc

/// File names and file locking for `.git/folio/index/`.
enum IndexNames {
  /// The stem of a table's index files: its name, percent-encoded as pks are.
  static func fileStem(_ table: String) -> String {
    let name = (try? PrimaryKey.fileName(for: "t-" + table)) ?? "t-\(FNV.hex(table.utf8)).json"
    return String(name.dropLast(PrimaryKey.fileExtension.count))
  }

  /// Writes the file name of the pk in `pk` (UTF-8) into `buffer` as a C
  /// string, encoded by ``PrimaryKey/encodeStem(_:_:)`` as document files
  /// are named, without allocating, under its folders in `layout`
  /// (``TableLayout/folderBytes(of:into:)``). False if it does not fit.
  static func fileName(
    of pk: UnsafeRawBufferPointer, into buffer: inout [CChar], layout: TableLayout = .flat,
    folder: inout [UInt8]
  ) -> Bool {
    let prefix = layout.folderBytes(of: pk, into: &folder)
    let limit = buffer.count - 1 - PrimaryKey.fileExtension.utf8.count - prefix
    return buffer.withUnsafeMutableBufferPointer { out in
      var n = 0
      var fits = true
      for i in 0..<prefix {
        out[n] = CChar(bitPattern: folder[i])
        n += 1
      }
      PrimaryKey.encodeStem(pk) { byte in
        guard n < limit + prefix else {
          fits = false
          return
        }
        out[n] = CChar(bitPattern: byte)
        n += 1
      }
      guard fits else { return false }
      for byte in PrimaryKey.fileExtension.utf8 {
        out[n] = CChar(bitPattern: byte)
        n += 1
      }
      out[n] = 0
      return true
    }
  }

  /// Runs `body` holding the index lock (`flock` on `path`). Not blocking:
  /// when another process holds it, `body` is skipped, which only means a
  /// repair is not saved and will be found again.
  static func withLock(_ path: String, blocking: Bool, _ body: () -> Void) {
    try? FileSystem.makeDirectories(FileSystem.split(path).directory)
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
    guard fd >= 0 else { return }
    defer { close(fd) }
    guard (try? FileSystem.lockFile(fd, LOCK_EX | (blocking ? 0 : LOCK_NB), path: path)) == true else {
      return
    }
    defer { flock(fd, LOCK_UN) }
    body()
  }

  /// Appends `bytes` to the file at `path`, creating it.
  static func append(_ bytes: [UInt8], to path: String) throws {
    let fd = try FileSystem.syscall("open", path: path) {
      open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    defer { close(fd) }
    try FileSystem.writeAll(fd, bytes, path: path)
  }
}
