import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Gathers the documents a first import writes into its table's packed
/// cache (``PackFiller``), so that the first export or scan after the import
/// reads one file, not every document again.
///
/// A pack record says "this file, with this stat data, held these bytes at
/// `checkedAt`". While staged, a file is the import's alone (the staging
/// folder is private, and a whole-folder landing keeps each file's stat
/// data), so that holds from its write until it lands. Each document is
/// noted as it is written, with its stat data, in a side file; when staging
/// ends, the notes become pack records with `checkedAt` then, except the
/// files still within the racy margin, which the first scan reads instead.
/// The pack is put in place only if the folder landed whole.
///
/// Memory stays flat: notes and records go to disk a megabyte at a time.
/// Used by the writer's thread, then by the import once the writer has
/// finished.
final class ImportPackRecorder {
  private let filler: PackFiller
  private let notesPath: String
  private var notes: Int32
  private var buffer: [UInt8] = []
  private var abandoned = false

  private static let bufferLimit = 1 << 20
  /// pk length, document length (u32 each), then inode, size, mtime and
  /// ctime (i64 each).
  private static let noteHeader = 40

  /// A recorder for `table`; nil when its files cannot be made.
  init?(store: Store, table: TableConfig, workspace: ImportWorkspace) {
    guard let filler = PackFiller(store: store, table: table, replacing: true) else { return nil }
    notesPath = workspace.directory + ".notes"
    notes = open(notesPath, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard notes >= 0 else { return nil }
    self.filler = filler
  }

  deinit {
    if notes >= 0 {
      close(notes)
      unlink(notesPath)
    }
  }

  /// Notes the file just written through `fd` with `canonical` bytes. The
  /// writer's thread is the import's floor (file creation), so the notes
  /// are only copied here and compacted once staging ends.
  func wrote(pk: String, canonical: [UInt8], fd: Int32) {
    guard !abandoned else { return }
    var st = stat()
    guard fstat(fd, &st) == 0 else { return abandon() }
    let stat = FileStat(st)
    let pkBytes = pk.utf8
    buffer.appendLittleEndian(UInt32(pkBytes.count))
    buffer.appendLittleEndian(UInt32(canonical.count))
    for value in [stat.inode, stat.size, stat.mtime, stat.ctime] { buffer.appendLittleEndian(value) }
    buffer += pkBytes
    buffer += canonical
    if buffer.count >= Self.bufferLimit { flushNotes() }
  }

  /// Gives up: a document written twice would leave two records of one pk
  /// whose stat data may not tell them apart.
  func abandon() {
    abandoned = true
    buffer = []
    filler.discard()
  }

  /// Turns the notes into pack records, checked now, while every file is
  /// still the import's alone. Call once staging has ended.
  func settle() {
    flushNotes()
    guard !abandoned, lseek(notes, 0, SEEK_SET) == 0 else { return abandon() }
    let now = FileStat.now()
    var chunk = [UInt8](repeating: 0, count: Self.bufferLimit)
    var carry: [UInt8] = []
    while true {
      let n = chunk.withUnsafeMutableBytes { read(notes, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n >= 0 else { return abandon() }
      if n == 0 { break }
      carry += chunk[0..<n]
      var offset = 0
      carry.withUnsafeBytes { raw in
        while raw.count - offset >= Self.noteHeader {
          let pkLength = Int(raw.loadLittleEndian(fromByteOffset: offset, as: UInt32.self))
          let docLength = Int(raw.loadLittleEndian(fromByteOffset: offset + 4, as: UInt32.self))
          let end = offset + Self.noteHeader + pkLength + docLength
          guard end <= raw.count else { break }
          func word(_ k: Int) -> Int64 {
            raw.loadLittleEndian(fromByteOffset: offset + 8 + 8 * k, as: Int64.self)
          }
          let stat = FileStat(inode: word(0), size: word(1), mtime: word(2), ctime: word(3))
          let pkStart = offset + Self.noteHeader
          filler.add(
            pk: String(decoding: raw[pkStart..<(pkStart + pkLength)], as: UTF8.self),
            compact: JSONWriter.compact(
              canonical: UnsafeRawBufferPointer(rebasing: raw[(pkStart + pkLength)..<end])),
            stat: stat, checkedAt: now)
          offset = end
        }
      }
      carry.removeFirst(offset)
    }
  }

  /// Puts the pack in place over the table's, if the folder landed whole.
  func finish(landedWhole: Bool) {
    if landedWhole && !abandoned { filler.finish(replacing: true) } else { filler.discard() }
  }

  private func flushNotes() {
    guard !abandoned, !buffer.isEmpty else { return }
    if (try? FileSystem.writeAll(notes, buffer, path: notesPath)) == nil { return abandon() }
    buffer.removeAll(keepingCapacity: true)
  }
}
