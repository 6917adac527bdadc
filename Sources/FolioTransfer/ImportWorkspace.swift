import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// Where an import builds its result before it lands, and how it lands.
///
/// An import writes each new document into `.git/folio/import/docs/` and its
/// compact op lines into `.git/folio/import/ops.ndjson`, without touching
/// the table. A bad row, an error or a kill at this stage leaves the table as
/// it was; the leftovers are cleared by the next import. Staging runs
/// without the store lock (``Store/importLock`` keeps imports from sharing
/// the folder); landing takes it.
///
/// To land, one `syncfs` makes every staged file durable, then a small
/// journal (`import/journal`: the table folder, the op log and its offset,
/// with a checksum) is written and flushed. That flush is the import's
/// single durability point. Then the ops are appended to the op log, each
/// staged file is renamed into the table folder, one more `syncfs` runs, and
/// the journal and staging folder go. A crash after the durability point is
/// finished by the next process that opens the store: appending at the
/// recorded offset and renaming what is left are both safe to repeat.
///
/// When the table folder is empty or missing (a first import), the staged
/// folder itself is renamed into place: one rename instead of one per
/// document, and the files keep the stat data they were written with.
struct ImportWorkspace {
  let directory: String

  init(privateDirectory: String) {
    directory = privateDirectory + "/import"
  }

  var documentsDirectory: String { directory + "/docs" }
  var opsPath: String { directory + "/ops.ndjson" }
  var journalPath: String { directory + "/journal" }
  /// A copy of input that can be read only once, for a second staging.
  var inputCopyPath: String { directory + "/input" }

  /// Whether an import passed its durability point and must be finished.
  static func isPending(privateDirectory: String) -> Bool {
    Journal.isPending(at: ImportWorkspace(privateDirectory: privateDirectory).journalPath)
  }

  /// The landing record.
  struct Record {
    var tableDirectory: String
    var logPath: String
    var logOffset: Int
    var opsSize: Int
    /// Land by renaming the staged folder over the (empty) table folder.
    var wholeFolder = false
  }

  /// Where an import builds its pack (outside the staging folder, which
  /// landing removes before the commit).
  var packPath: String { directory + ".pack" }

  /// Removes a staging folder that never reached its durability point.
  func discard() throws {
    try removeStaged()
    unlink(journalPath)
    unlink(inputCopyPath)
    rmdir(directory)
  }

  private func removeStaged() throws {
    // A hashed or nested table's folders, down to its files.
    func remove(_ folder: String) throws {
      for name in try FileSystem.list(folder) ?? [] where unlink(folder + "/" + name) != 0 && errno == EISDIR
      {
        try remove(folder + "/" + name)
      }
      rmdir(folder)
    }
    try remove(documentsDirectory)
    unlink(opsPath)
    unlink(opsPath + ".new")
  }

  /// Empties the staging folder for a second staging, keeping the copy of
  /// the input.
  func restart() throws {
    try removeStaged()
    unlink(packPath)
    try FileSystem.makeDirectories(documentsDirectory)
  }

  /// Where to copy the input as it is read, open for writing, when `path`
  /// is stdin (`-`) or anything else but a regular file; nil otherwise.
  func inputCopy(for path: String) throws -> (fd: Int32, path: String)? {
    if path != "-", FileSystem.isRegularFile(path) { return nil }
    let copyPath = inputCopyPath
    let fd = try FileSystem.syscall("open", path: copyPath) {
      open(copyPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    }
    return (fd, copyPath)
  }

  /// Creates an empty staging folder.
  func prepare() throws {
    try discard()
    unlink(packPath)
    try FileSystem.makeDirectories(documentsDirectory)
  }

  /// The durability point: flushes every staged file, then the journal.
  func seal(_ record: Record, root: String) throws {
    try FileSystem.syncFileSystem(containing: root)
    let body: JSONValue = [
      "version": 1,
      "table": .string(Store.relative(record.tableDirectory, to: root)),
      "log": .string(Store.relative(record.logPath, to: root)),
      "offset": .integer(record.logOffset),
      "ops": .integer(record.opsSize),
      "whole": .bool(record.wholeFolder),
    ]
    var bytes = body.compactBytes()
    bytes.append(UInt8(ascii: "\n"))
    bytes.append(contentsOf: FNV.hex(bytes).utf8)
    bytes.append(UInt8(ascii: "\n"))
    let fd = try FileSystem.syscall("open", path: journalPath) {
      open(journalPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    defer { close(fd) }
    try FileSystem.writeAll(fd, bytes, path: journalPath)
    try FileSystem.syscall("fdatasync", path: journalPath) { fdatasync(fd) }
    try FileSystem.syncDirectory(directory)
  }

  /// The sealed record, or nil if there is none or it is torn.
  func readRecord(root: String) throws -> Record? {
    guard let bytes = try FileSystem.read(journalPath),
      let newline = bytes.firstIndex(of: UInt8(ascii: "\n"))
    else { return nil }
    let body = Array(bytes[...newline])
    let checksum = String(decoding: bytes[(newline + 1)...], as: UTF8.self)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    guard checksum == FNV.hex(body), let json = try? JSONValue(parsing: Array(body.dropLast())),
      let table = json["table"]?.stringValue, let log = json["log"]?.stringValue,
      let offset = json["offset"]?.intValue, let ops = json["ops"]?.intValue
    else { return nil }
    return Record(
      tableDirectory: root + "/" + table, logPath: root + "/" + log, logOffset: offset, opsSize: ops,
      wholeFolder: json["whole"] == .bool(true))
  }

  /// Lands a sealed import: ops into the log, documents into the table.
  /// Safe to run again after a crash part way.
  /// - Returns: whether the staged folder landed whole, by one rename.
  @discardableResult
  func land(_ record: Record, root: String) throws -> Bool {
    try appendOps(record)
    let parent = FileSystem.split(record.tableDirectory).directory
    var whole = false
    if record.wholeFolder, FileSystem.isDirectory(documentsDirectory) {
      try FileSystem.makeDirectories(parent)
      // Only an empty folder can be replaced by a rename; if something
      // appeared in it since the seal, land file by file instead.
      if rmdir(record.tableDirectory) == 0 || errno == ENOENT,
        rename(documentsDirectory, record.tableDirectory) == 0
      {
        whole = true
        try FileSystem.syncDirectory(parent)
      }
    }
    if FileSystem.isDirectory(documentsDirectory) {
      try FileSystem.makeDirectories(record.tableDirectory)
      try Self.moveEntries(of: documentsDirectory, into: record.tableDirectory)
    }
    try FileSystem.syncFile(record.logPath)
    try Journal.clear(at: journalPath)
    try discard()
    return whole
  }

  /// Moves each file in folder `from` into folder `to`, and each folder's
  /// files into the folder of the same name there, made when missing (a
  /// hashed or nested table's folders may be there already); then removes
  /// the folders left empty.
  private static func moveEntries(of from: String, into to: String) throws {
    try FileSystem.makeDirectories(to)
    for name in try FileSystem.list(from) ?? [] {
      let source = from + "/" + name
      let target = to + "/" + name
      if FileSystem.isDirectoryNoFollow(source) {
        try moveEntries(of: source, into: target)
        rmdir(source)
      } else {
        try FileSystem.syscall("rename", path: target) { rename(source, target) }
      }
    }
    try FileSystem.syncDirectory(to)
  }

  /// Copies the staged op lines to the log at the recorded offset, in chunks.
  private func appendOps(_ record: Record) throws {
    try FileSystem.makeDirectories(FileSystem.split(record.logPath).directory)
    let source = try FileSystem.syscall("open", path: opsPath) { open(opsPath, O_RDONLY | O_CLOEXEC) }
    defer { close(source) }
    let path = record.logPath
    let target = try FileSystem.syscall("open", path: path) {
      open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    defer { close(target) }
    try FileSystem.syscall("ftruncate", path: path) { ftruncate(target, off_t(record.logOffset)) }
    try FileSystem.syscall("lseek", path: path) { lseek(target, off_t(record.logOffset), SEEK_SET) }
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    var copied = 0
    while copied < record.opsSize {
      let n = try chunk.withUnsafeMutableBytes { raw in
        try FileSystem.syscall("read", path: opsPath) { read(source, raw.baseAddress, raw.count) }
      }
      if n == 0 { break }
      let take = min(n, record.opsSize - copied)
      try FileSystem.writeAll(target, chunk[0..<take], path: path)
      copied += take
    }
  }
}
