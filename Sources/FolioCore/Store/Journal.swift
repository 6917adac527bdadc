import FolioJSON
import FolioSystem
import Glibc

/// The redo journal that makes a transaction atomic and durable.
///
/// A commit writes the journal and flushes it (the one durability point),
/// then appends the op log and replaces the documents, then empties the
/// journal. If a crash comes in between, the next writer finds a complete
/// journal and redoes it: it puts the log back to the recorded offset and
/// appends the ops again, and rewrites each document that still holds its
/// old content. A torn journal fails its checksum and is dropped, and since
/// nothing else is touched before the journal is whole, nothing is lost.
///
/// Layout: one line of JSON, then a line with its FNV-1a hash. A journal
/// file may hold several such records, one per transaction, when a writer
/// defers the flush of the files after each one (see
/// ``Store/writeDeferringFlush(_:)``): they are redone in order, and a
/// torn last record is dropped.
package struct Journal {
  /// One document write: `new` is the file's new bytes, or nil to delete it.
  package struct Write {
    package var path: String
    var oldHash: String?
    package var new: [UInt8]?
    /// In memory only (a redo has none): how to fold in an edit another
    /// program saved over the document after it was read.
    var fold: Fold? = nil
  }

  /// What a commit needs to fold an editor's save into its write, so no
  /// save is lost to an apply: the document as the transaction read it and as it wrote it.
  struct Fold {
    var table: TableConfig
    var pk: String
    var original: JSONObject?
    var new: JSONObject?

    /// The editor's change, as the diff from `original` (what the file held
    /// before the editor saved) to `current` read through the column kinds,
    /// and that change applied on top of `new`; nil if `current` is not a
    /// JSON object (it is then left as the editor saved it).
    func apply(over current: [UInt8]?) -> (mutation: Mutation, edited: JSONObject?, folded: JSONObject?)? {
      guard let current else {
        // Deleted behind the transaction's back: the delete is a change
        // too, recorded as a remove after the transaction's own ops.
        return (Mutation(kind: .remove), nil, nil)
      }
      guard case .object(let edited)? = try? JSONValue(parsing: current) else { return nil }
      let mutation = Mutation.diff(from: original, to: edited, kinds: table.kind(of:))
      return (mutation, edited, mutation.apply(to: new, pk: pk, key: table.key).document)
    }
  }

  var logPath: String
  var logOffset: Int
  var logBytes: [UInt8]
  var writes: [Write]
  /// In memory only: the newest stamp among the ops, so that an edit
  /// folded in while applying is stamped after them.
  var lastHLC: HLC? = nil

  /// The journal's bytes: a JSON line and its checksum line.
  func encoded(relativeTo root: String) -> [UInt8] {
    let writesJSON: [JSONValue] = writes.map { write in
      [
        "path": .string(Store.relative(write.path, to: root)),
        "old": write.oldHash.map(JSONValue.string) ?? .null,
        "new": write.new.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null,
      ]
    }
    let body: JSONValue = [
      "version": 1,
      "log": .string(Store.relative(logPath, to: root)),
      "offset": .integer(logOffset),
      "ops": .string(String(decoding: logBytes, as: UTF8.self)),
      "writes": .array(writesJSON),
    ]
    var bytes = body.compactBytes()
    bytes.append(UInt8(ascii: "\n"))
    bytes.append(contentsOf: FNV.hex(bytes).utf8)
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  /// Reads every whole record of a journal file in order, stopping at the
  /// first torn or unreadable one; empty for an empty file. `end` is where
  /// the whole records end: short of the file's size when the last one is
  /// torn, or still being written.
  static func decodeAll(_ bytes: [UInt8], root: String) -> (records: [Journal], end: Int) {
    var records: [Journal] = []
    var start = bytes.startIndex
    while start < bytes.endIndex {
      guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { break }
      let end = min(bytes.endIndex, newline + 1 + trailerLength)
      guard let record = decode(Array(bytes[start..<end]), root: root) else { break }
      records.append(record)
      start = end
    }
    return (records, start - bytes.startIndex)
  }

  /// Reads a journal of one record, or nil if it is empty, torn or
  /// unreadable.
  static func decode(_ bytes: [UInt8], root: String) -> Journal? {
    guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
    let body = Array(bytes[...newline])
    let checksum = String(decoding: bytes[(newline + 1)...], as: UTF8.self)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    guard checksum == FNV.hex(body),
      let json = try? JSONValue(parsing: Array(body.dropLast())),
      let log = json["log"]?.stringValue, let offset = json["offset"]?.intValue,
      let ops = json["ops"]?.stringValue, let writes = json["writes"]?.arrayValue
    else { return nil }
    var decoded: [Write] = []
    for write in writes {
      guard let path = write["path"]?.stringValue else { return nil }
      decoded.append(
        Write(
          path: root + "/" + path, oldHash: write["old"]?.stringValue,
          new: write["new"]?.stringValue.map { Array($0.utf8) }))
    }
    return Journal(
      logPath: root + "/" + log, logOffset: offset, logBytes: Array(ops.utf8), writes: decoded)
  }
}

extension Journal {
  /// Writes the journal over the (empty) journal file and flushes it. This
  /// flush is the transaction's durability point.
  /// - Returns: the journal's checksum line, for ``stampApplied(_:journal:)``.
  @discardableResult
  func write(to path: String, root: String) throws -> [UInt8] {
    try put(to: path, root: root, appending: false).trailer
  }

  /// Appends the journal as one more record of the journal file and
  /// flushes it: the durability point of a transaction whose files are
  /// flushed later (``Store/writeDeferringFlush(_:)``). The records before
  /// it stay whole whatever happens to this one.
  /// - Returns: the record's checksum line, and the file's size after it.
  func append(to path: String, root: String) throws -> (trailer: [UInt8], size: Int) {
    try put(to: path, root: root, appending: true)
  }

  /// Writes the record over the file's content, or after it, and flushes.
  private func put(to path: String, root: String, appending: Bool) throws -> (trailer: [UInt8], size: Int) {
    let bytes = encoded(relativeTo: root)
    let isNew = !FileSystem.exists(path)
    // O_NOFOLLOW: a link left in `.git/folio/` must not redirect the journal.
    let fd = try FileSystem.syscall("open", path: path) {
      open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
    }
    defer { close(fd) }
    var start = 0
    if appending {
      var st = stat()
      try FileSystem.syscall("fstat", path: path) { fstat(fd, &st) }
      start = Int(st.st_size)
      try FileSystem.syscall("lseek", path: path) { lseek(fd, st.st_size, SEEK_SET) }
    } else {
      try FileSystem.syscall("ftruncate", path: path) { ftruncate(fd, 0) }
    }
    try FileSystem.writeAll(fd, bytes, path: path)
    try FileSystem.syscall("fdatasync", path: path) { fdatasync(fd) }
    if isNew { try FileSystem.syncDirectory(FileSystem.split(path).directory) }
    return (Array(bytes.suffix(Journal.trailerLength)), start + bytes.count)
  }

  /// Replaces the journal with its records from byte `offset` on (a record
  /// boundary), flushed before the rename: the records before it are done.
  static func keepRecords(at path: String, from offset: Int) throws {
    guard let bytes = try FileSystem.read(path), offset < bytes.count else { return }
    try FileSystem.writeAtomically(path, Array(bytes[offset...]), sync: true)
    // Later records are appended to the new file and flushed with it
    // alone: the rename must not be lost behind them.
    try FileSystem.syncDirectory(FileSystem.split(path).directory)
  }

  /// Empties the journal once its transaction is done. No flush: if the
  /// emptying is lost in a crash, redoing a finished journal changes nothing.
  package static func clear(at path: String) throws {
    if truncate(path, 0) != 0 && errno != ENOENT {
      throw FileSystem.error(errno, "truncate", path: path)
    }
  }

  /// Whether a journal is waiting to be redone or dropped.
  package static func isPending(at path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && st.st_size > 0
  }
}
