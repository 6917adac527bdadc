import FolioJSON
import FolioSystem
import Foundation
import Glibc
import Synchronization

/// Reading and appending the op logs in `.folio/ops/`: one NDJSON file per
/// replica, append-only, one writer per file, so they never conflict in git.
package enum OpLog {
  /// Checks that `.folio` and `.folio/ops` under `root` are folders, not
  /// links: the logs' own opens refuse a link at the file, and this
  /// refuses one on the way, so that no reader of the logs (the watcher,
  /// blame, fsck) reads, or quotes in an error, a file outside the store.
  /// - Throws: `UNSAFE_PATH` naming the link.
  package static func checkFolder(root: String) throws {
    if let fd = try FileSystem.openDirectory(Store.opsFolder, under: root, create: false) { close(fd) }
  }

  /// Where the next line goes: just past the last newline. Anything after it
  /// is a torn line that no commit ever finished, and the next append
  /// overwrites it.
  /// - Throws: `UNSAFE_PATH` if the log is a symbolic link.
  package static func size(of path: String) throws -> Int {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    if fd < 0 {
      if errno == ENOENT { return 0 }
      if errno == ELOOP { throw FileSystem.unsafePathError(path, isLink: true) }
      throw FileSystem.error(errno, "open", path: path)
    }
    defer { close(fd) }
    var st = stat()
    try FileSystem.syscall("fstat", path: path) { fstat(fd, &st) }
    var end = Int(st.st_size)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while end > 0 {
      let start = max(0, end - buffer.count)
      let n = try buffer.withUnsafeMutableBytes { raw in
        try FileSystem.syscall("pread", path: path) { pread(fd, raw.baseAddress, end - start, off_t(start)) }
      }
      if let newline = buffer[..<n].lastIndex(of: UInt8(ascii: "\n")) { return start + newline + 1 }
      end = start
    }
    return 0
  }

  /// Writes `bytes` at `offset` (dropping anything after it) and, if
  /// `sync`, flushes.
  ///
  /// The log's folder is opened from the store `root` and the log itself
  /// with `O_NOFOLLOW`: a log committed as a link must not be appended
  /// through.
  /// - Throws: `UNSAFE_PATH` if the log or a folder on its way is a link.
  static func append(_ bytes: [UInt8], to path: String, at offset: Int, root: String, sync: Bool = true)
    throws
  {
    let (directory, name) = FileSystem.split(path)
    let dirfd = try FileSystem.openDirectory(
      try FileSystem.relativePath(directory, to: root), under: root, create: true)!
    defer { close(dirfd) }
    var st = stat()
    let isNew = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0
    // With O_NOFOLLOW, O_CREAT fails with ELOOP on a link instead of
    // creating the file it points to.
    let opened = try FileSystem.openAt(
      dirfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, path: path, expecting: [ELOOP])
    guard case .success(let fd) = opened else { throw FileSystem.unsafePathError(path, isLink: true) }
    defer { close(fd) }
    try FileSystem.syscall("ftruncate", path: path) { ftruncate(fd, off_t(offset)) }
    try FileSystem.syscall("lseek", path: path) { lseek(fd, off_t(offset), SEEK_SET) }
    try FileSystem.writeAll(fd, bytes, path: path)
    guard sync else { return }
    try FileSystem.syscall("fsync", path: path) { fsync(fd) }
    if isNew { try FileSystem.syscall("fsync", path: directory) { fsync(dirfd) } }
  }

  /// The last complete op in the log at `path`, if any.
  package static func lastOp(in path: String) throws -> Op? {
    let end = try size(of: path)
    guard end > 0 else { return nil }
    let fd = try FileSystem.syscall("open", path: path) { open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
    defer { close(fd) }
    var length = 4096
    while true {
      let start = max(0, end - length)
      var buffer = [UInt8](repeating: 0, count: end - start)
      let n = try buffer.withUnsafeMutableBytes { raw in
        try FileSystem.syscall("pread", path: path) { pread(fd, raw.baseAddress, end - start, off_t(start)) }
      }
      let body = buffer[..<max(0, n - 1)]  // without the final newline
      if let newline = body.lastIndex(of: UInt8(ascii: "\n")) {
        return try Op(json: JSONValue(parsing: Array(body[(newline + 1)...])))
      }
      if start == 0 { return try Op(json: JSONValue(parsing: Array(body))) }
      length *= 4
    }
  }

  /// One op and where it came from.
  package struct Entry {
    package var op: Op
    /// The log's path in the store (`.folio/ops/<replica>.ndjson`).
    package var file: String
    var line: Int
    /// Where the line's bytes are in the file, without its newline.
    package var bytes: Range<Int>
  }

  /// Every op in one log file, in file order.
  /// - Throws: `INVALID_JSON` at `file:line:col` for a bad line.
  static func entries(in path: String, displayName: String) throws -> [Entry] {
    guard let bytes = try FileSystem.read(path) else { return [] }
    return try entries(of: bytes, displayName: displayName)
  }

  /// Every op in the bytes of one log file, in file order.
  /// - Parameter pks: when given, a line whose `"pk":"…"` plainly names
  ///   another document is not parsed (see ``allEntries(root:pks:)``).
  static func entries(of bytes: [UInt8], displayName: String, pks: Set<String>? = nil) throws -> [Entry] {
    let single = pks.flatMap { $0.count == 1 ? Array($0.first!.utf8) : nil }
    return try bytes.withUnsafeBufferPointer { buffer -> [Entry] in
      // A long log is scanned in parts on every core, each part starting
      // after a newline; line numbers are then counted on from the parts
      // before.
      let jobs = buffer.count < 4 << 20 ? 1 : max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
      var bounds = [0]
      for job in 1..<max(jobs, 1) {
        let guess = max(bounds.last!, buffer.count * job / jobs)
        guard guess < buffer.count, let base = buffer.baseAddress,
          let found = memchr(base + guess, 0x0A, buffer.count - guess)
        else { break }
        bounds.append(UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found)) + 1)
      }
      bounds.append(buffer.count)
      let parts = bounds.count - 1
      if parts == 1 {
        return try scan(buffer, 0..<buffer.count, displayName: displayName, pks: pks, single: single).entries
      }
      let results = Mutex<[Int: Result<(entries: [Entry], lines: Int), any Error>]>([:])
      let shared = ScanBuffer(buffer: buffer)
      let cuts = bounds
      DispatchQueue.concurrentPerform(iterations: parts) { part in
        let result = Result {
          try scan(
            shared.buffer, cuts[part]..<cuts[part + 1], displayName: displayName, pks: pks, single: single)
        }
        results.withLock { $0[part] = result }
      }
      var all: [Entry] = []
      var linesBefore = 0
      let done = results.withLock { $0 }
      for part in 0..<parts {
        switch done[part]! {
        case .success(let (entries, lines)):
          all += entries.map { entry in
            var entry = entry
            entry.line += linesBefore
            return entry
          }
          linesBefore += lines
        case .failure(var error as FolioError):
          error.location?.line += linesBefore
          throw error
        case .failure(let error):
          throw error
        }
      }
      return all
    }
  }

  /// The ops in `range` of a log's bytes, which starts at a line's start,
  /// with line numbers counted from the range's start, and how many
  /// complete lines it holds.
  private static func scan(
    _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, displayName: String, pks: Set<String>?,
    single: [UInt8]?
  ) throws -> (entries: [Entry], lines: Int) {
    var entries: [Entry] = []
    var lineNumber = 0
    guard let base = buffer.baseAddress else { return ([], 0) }
    var start = range.lowerBound
    while start < range.upperBound {
      // A torn tail has no newline and is not read.
      guard let found = memchr(base + start, 0x0A, range.upperBound - start) else { break }
      lineNumber += 1
      let newline = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
      defer { start = newline + 1 }
      if newline == start { continue }
      let line = UnsafeBufferPointer(rebasing: buffer[start..<newline])
      if let pks, !mayName(line, oneOf: pks, single: single) { continue }
      do {
        let value = try JSONValue(parsing: Array(line), file: displayName)
        entries.append(
          Entry(op: try Op(json: value), file: displayName, line: lineNumber, bytes: start..<newline))
      } catch var error as FolioError {
        if var location = error.location {
          location.line = lineNumber
          error.location = location
        } else {
          error.location = .init(file: displayName, line: lineNumber, column: 1)
        }
        throw error
      }
    }
    return (entries, lineNumber)
  }

  /// Every op of every replica under `root`, oldest first by HLC.
  /// - Parameter pks: when given, only ops on documents with these pks
  ///   (others may come too: the caller still filters). A line Folio
  ///   wrote names its pk as `"pk":"…"`; one whose pk is plainly another
  ///   is passed over without being parsed, which makes a look at a few
  ///   documents' ops cheap in a long log. Any other spelling is parsed.
  package static func allEntries(root: String, pks: Set<String>? = nil) throws -> [Entry] {
    try allEntriesAndLogs(root: root, pks: pks).entries
  }

  /// ``allEntries(root:pks:)``, with the bytes each log held when read, by
  /// its path in the store (`.folio/ops/<replica>.ndjson`).
  package static func allEntriesAndLogs(root: String, pks: Set<String>? = nil) throws -> (
    entries: [Entry], logs: [String: [UInt8]]
  ) {
    try checkFolder(root: root)
    let directory = root + "/" + Store.opsFolder
    var all: [Entry] = []
    var logs: [String: [UInt8]] = [:]
    for name in (try FileSystem.list(directory) ?? []).sorted() where name.hasSuffix(".ndjson") {
      guard let bytes = try FileSystem.read(directory + "/" + name) else { continue }
      let displayName = Store.opsFolder + "/" + name
      all += try entries(of: bytes, displayName: displayName, pks: pks)
      logs[displayName] = bytes
    }
    return (all.sorted { $0.op.hlc < $1.op.hlc }, logs)
  }

  /// False only when the line's compact `"pk":"…"` member, free of
  /// escapes, names a pk outside `pks`; `single` is the one pk's bytes
  /// when there is one, compared without making a string.
  private static func mayName(_ buffer: UnsafeBufferPointer<UInt8>, oneOf pks: Set<String>, single: [UInt8]?)
    -> Bool
  {
    // `"pk":"` found by its `k` with memchr: Folio writes the stamp and
    // the op kind first, and neither has a `k`, so the first `k` is
    // nearly always the member's.
    var start: Int?
    if let base = buffer.baseAddress {
      var at = 2
      while at + 3 < buffer.count,
        let found = memchr(base + at, 0x6B, buffer.count - at - 3)
      {
        let k = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        if buffer[k - 2] == 0x22 && buffer[k - 1] == 0x70 && buffer[k + 1] == 0x22 && buffer[k + 2] == 0x3A
          && buffer[k + 3] == 0x22
        {
          start = k + 4
          break
        }
        at = k + 1
      }
    }
    guard let start else { return true }
    var end = start
    while end < buffer.count {
      switch buffer[end] {
      case UInt8(ascii: "\\"): return true
      case UInt8(ascii: "\""):
        let pk = UnsafeBufferPointer(rebasing: buffer[start..<end])
        if let single {
          guard single.count == pk.count else { return false }
          return pk.isEmpty
            || single.withUnsafeBytes { memcmp($0.baseAddress!, pk.baseAddress!, pk.count) == 0 }
        }
        return pks.contains(String(decoding: pk, as: UTF8.self))
      default: end += 1
      }
    }
    return true
  }
}

/// The bytes the parallel parts of ``OpLog/entries(of:displayName:pks:)``
/// scan. `@unchecked Sendable`: it is only read, and `concurrentPerform`
/// returns after every part has ended, before the buffer goes away.
private struct ScanBuffer: @unchecked Sendable {
  let buffer: UnsafeBufferPointer<UInt8>
}
