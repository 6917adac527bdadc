import FolioSystem
import Glibc

extension Journal {
  /// The length of a journal's last line: its checksum in hex and a newline.
  static let trailerLength = 17

  /// The file a writer stamps with a journal's checksum line once every
  /// document of that journal is in place (`.git/folio/applied`).
  static func appliedPath(journal path: String) -> String {
    FileSystem.split(path).directory + "/applied"
  }

  /// Tells observers in other processes that the transaction whose journal
  /// ends in `trailer` is applied, before the journal is emptied: the
  /// truncate, and whatever the writer does before it, can wait behind the
  /// file system's own journal on a slow disk, and by the time an observer
  /// looks, a busy writer has often written the next journal.
  ///
  /// One `pwrite` over the same bytes, no truncate and no flush: the stamp
  /// only says when to read, and a crash that loses it loses nothing (the
  /// journal is still there and is redone). A failure is ignored for the
  /// same reason; observers then wait for the journal to empty.
  static func stampApplied(_ trailer: [UInt8], journal path: String) {
    let stamp = appliedPath(journal: path)
    let fd = open(stamp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return }
    defer { close(fd) }
    _ = trailer.withUnsafeBytes { buffer in
      FileSystem.retrying { pwrite(fd, buffer.baseAddress, buffer.count, 0) }
    }
  }

  /// The checksum line of the journal of a transaction under way, as an
  /// observer sees it: nil when the journal is empty or stamped applied.
  /// Reads only the journal's tail and the stamp.
  package static func unstampedTrailer(at path: String) -> [UInt8]? {
    guard let tail = tail(at: path) else { return nil }
    guard tail.whole else { return tail.trailer }
    let stamp = (try? FileSystem.read(appliedPath(journal: path))) ?? []
    return stamp.starts(with: tail.trailer) ? nil : tail.trailer
  }

  /// The journal file's size and its last ``trailerLength`` bytes (`whole`
  /// false when it is shorter: then the bytes read, zero-padded); nil when
  /// it is missing or empty.
  static func tail(at path: String) -> (size: Int, trailer: [UInt8], whole: Bool)? {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_size > 0 else { return nil }
    var trailer = [UInt8](repeating: 0, count: trailerLength)
    let offset = max(0, Int(st.st_size) - trailerLength)
    let count = trailer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, trailerLength, off_t(offset)) }
    return (Int(st.st_size), trailer, count == trailerLength)
  }

  /// The document paths a journal writes, or nil if it is not whole (being
  /// written: then its transaction has touched no document yet, and what it
  /// writes is seen as a transaction that begins later).
  package static func writes(at path: String, root: String) -> [String]? {
    // The last record is the transaction under way; those before it are
    // stamped applied already.
    guard let bytes = try? FileSystem.read(path) else { return nil }
    let (records, end) = decodeAll(bytes, root: root)
    guard end == bytes.count, let journal = records.last else { return nil }
    return journal.writes.map(\.path)
  }
}
