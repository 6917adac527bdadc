import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// The ops recorded in one commit's tree (all `.folio/ops/*.ndjson` files),
/// and the ops one commit has that another does not.
package struct OpHistory {
  /// One document. Pks compare by their bytes: twins that Swift's `==`
  /// calls equal are two documents, and replay must never mix their ops
  /// (issue 13).
  package struct DocumentKey: Hashable, Sendable {
    package var table: String
    package var pk: String

    package init(table: String, pk: String) {
      self.table = table
      self.pk = pk
    }

    package static func == (lhs: DocumentKey, rhs: DocumentKey) -> Bool {
      lhs.pk.utf8Equals(rhs.pk) && lhs.table.utf8Equals(rhs.table)
    }

    package func hash(into hasher: inout Hasher) {
      table.hashUTF8(into: &hasher)
      pk.hashUTF8(into: &hasher)
    }

    /// Byte order: by table, then pk.
    static func precedes(_ a: DocumentKey, _ b: DocumentKey) -> Bool {
      let c = a.table.utf8Compare(b.table)
      return c != 0 ? c < 0 : a.pk.utf8Compare(b.pk) < 0
    }
  }

  /// Op log files given as bytes (``init(files:)``), by file name.
  private var given: [String: [UInt8]] = [:]
  /// The blob id of each file, for a history read from a tree: read only
  /// when asked for, so that a log segment no side changed is never read.
  private var ids: [String: GitOID] = [:]
  /// Where blobs and parsed tails are read and shared with other histories.
  private var cache: OpLogCache?
  private var repository: GitRepository?

  /// Reads the op logs of `tree`, through `cache` when given: histories
  /// that share one read each blob once, and parse the ops one blob adds
  /// over another once. Blobs are read when first needed.
  init(tree: GitTree?, repository: GitRepository, cache: OpLogCache? = nil) throws {
    if let tree {
      for (name, id) in try tree.blobs(in: Store.opsFolder, repository: repository)
      where name.hasSuffix(".ndjson") {
        ids[name] = id
      }
    }
    self.cache = cache ?? OpLogCache()
    self.repository = repository
  }

  package init(files: [String: [UInt8]]) {
    given = files
  }

  /// The log files' names.
  var names: [String] { Array(ids.keys) + given.keys.filter { ids[$0] == nil } }

  /// The bytes of the log `name`, or nil when this history has no such log.
  func bytes(of name: String) throws -> [UInt8]? {
    if let bytes = given[name] { return bytes }
    guard let id = ids[name], let cache, let repository else { return nil }
    return try cache.blob(id, repository: repository)
  }

  /// Every log, read whole (history walks and compaction).
  var files: [String: [UInt8]] {
    get throws {
      var all = given
      for name in ids.keys where all[name] == nil { all[name] = try bytes(of: name) }
      return all
    }
  }

  /// Each replica's log segments, newest first (see
  /// ``OpLogSegments/segmentBytes``). A replica appends only to its newest
  /// segment, and stamps its ops in increasing order (but for default
  /// writes, stamped at time 0), so its newest stamp is in the newest
  /// segment that has a stamp past 0: the older ones need not be read.
  func segmentsByReplica() -> [[String]] {
    var byReplica: [Substring: [(segment: Int, name: String)]] = [:]
    for name in names {
      let (replica, segment) = OpLogSegments.replicaAndSegment(name)
      byReplica[replica, default: []].append((segment, name))
    }
    return byReplica.keys.sorted().map { replica in
      byReplica[replica]!.sorted { $0.segment > $1.segment }.map(\.name)
    }
  }

  /// The ops this history has that `base` does not, by document. Each file
  /// usually extends the base's copy, so only the new tail is parsed.
  /// - Parameter tableName: the name each op's table has now: an op a
  ///   replica recorded under a table's former name is that table's (see
  ///   ``Config/currentTableName(_:)``).
  package func ops(since base: OpHistory?, tableName: (String) -> String = { $0 }) throws -> [DocumentKey:
    [Op]]
  {
    var result: [DocumentKey: [Op]] = [:]
    for name in names.sorted() {
      for (_, found) in try newOps(in: name, since: base) {
        var op = found
        op.table = tableName(op.table)
        result[DocumentKey(table: op.table, pk: op.pk), default: []].append(op)
      }
    }
    return result
  }

  /// The ops of the log `name` that `base`'s copy does not have, with
  /// their line numbers; parsed once per pair of blobs when both histories
  /// were read from trees through one cache.
  func newOps(in name: String, since base: OpHistory?) throws -> [(line: Int, op: Op)] {
    let file = Store.opsFolder + "/" + name
    // Ids name the base's copy only when the base was read from a tree.
    guard let cache, let id = ids[name], base?.given[name] == nil else {
      return try Self.newOps(try bytes(of: name) ?? [], since: try base?.bytes(of: name) ?? [], file: file)
    }
    let baseID = base?.ids[name]
    // A segment no one appended to since: nothing to read.
    if baseID == id { return [] }
    return try cache.newOps(of: id, since: baseID) {
      try Self.newOps(try bytes(of: name) ?? [], since: try base?.bytes(of: name) ?? [], file: file)
    }
  }

  /// The ops of one log file that its base copy does not have, with their
  /// line numbers. A file usually extends its base, so only the new tail is
  /// parsed; a file the base's copy extends adds nothing.
  static func newOps(_ bytes: [UInt8], since baseBytes: [UInt8], file: String) throws
    -> [(line: Int, op: Op)]
  {
    // A log is megabytes long: compared and counted through its buffer, not
    // element by element through the generic collection methods.
    if startsWith(baseBytes, bytes) {
      // Every whole line here is a line of the base (a last line without
      // its newline is never parsed).
      return []
    }
    if startsWith(bytes, baseBytes) {
      let baseLines = baseBytes.withUnsafeBufferPointer { base in
        var count = 0
        for byte in base where byte == UInt8(ascii: "\n") { count += 1 }
        return count
      }
      return try numbered(bytes[baseBytes.count...], file: file, firstLine: baseLines + 1)
    }
    let known = Set(try parse(baseBytes[...], file: file).map(\.hlc))
    return try numbered(bytes[...], file: file, firstLine: 1).filter { !known.contains($0.op.hlc) }
  }

  /// Whether `whole` begins with all of `prefix`, compared through the
  /// buffers.
  static func startsWith(_ whole: [UInt8], _ prefix: [UInt8]) -> Bool {
    whole.count >= prefix.count
      && whole.withUnsafeBytes { whole in
        prefix.withUnsafeBytes { prefix in
          prefix.isEmpty || memcmp(whole.baseAddress!, prefix.baseAddress!, prefix.count) == 0
        }
      }
  }

  /// The newest stamp of any whole line of any log, read from each line's
  /// leading `{"hlc":"…"` without parsing the rest: the text form of a
  /// stamp sorts as the stamps do. Nil when some line does not begin so
  /// (an older build or a hand wrote it); `.some(nil)` when no log has a
  /// line.
  func newestStampOfAnyLine() throws -> HLC?? {
    let prefix = Array(#"{"hlc":""#.utf8)
    let zero = Array("0000000000000-".utf8)
    var newest: [UInt8]?
    for segments in segmentsByReplica() {
      for name in segments {
        guard let bytes = try bytes(of: name) else { continue }
        var pastZero = false
        let readable = bytes.withUnsafeBufferPointer { buffer -> Bool in
          var start = 0
          while let newline = Self.index(of: UInt8(ascii: "\n"), in: buffer, from: start) {
            defer { start = newline + 1 }
            if newline == start { continue }
            guard let stamp = Self.stamp(in: buffer, line: start..<newline, after: prefix) else {
              return false
            }
            if !stamp.starts(with: zero) { pastZero = true }
            if newest.map({ $0.lexicographicallyPrecedes(stamp) }) ?? true {
              newest = Array(stamp)
            }
          }
          return true
        }
        if !readable { return nil }
        // Older segments hold only older stamps.
        if pastZero { break }
      }
    }
    guard let newest else { return .some(nil) }
    return HLC(String(decoding: newest, as: UTF8.self)).map { .some($0) } ?? nil
  }

  /// The first `byte` in `buffer` at or after `start`.
  private static func index(of byte: UInt8, in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    guard start < buffer.count,
      let found = memchr(buffer.baseAddress! + start, Int32(byte), buffer.count - start)
    else { return nil }
    return buffer.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
  }

  /// The stamp text that opens the line after `prefix`, when it has the
  /// fixed-width text form with a plain ASCII replica (so that its bytes
  /// sort as the stamp does).
  private static func stamp(
    in buffer: UnsafeBufferPointer<UInt8>, line: Range<Int>, after prefix: [UInt8]
  ) -> UnsafeBufferPointer<UInt8>.SubSequence? {
    let first = line.lowerBound + prefix.count
    guard line.count > prefix.count + 20, buffer[line.lowerBound..<first].elementsEqual(prefix) else {
      return nil
    }
    guard let quote = index(of: UInt8(ascii: "\""), in: buffer, from: first), quote < line.upperBound,
      quote - first > 19
    else { return nil }
    for i in first..<quote {
      let byte = buffer[i]
      switch i - first {
      case 13, 18: guard byte == UInt8(ascii: "-") else { return nil }
      case 0..<18: guard byte &- UInt8(ascii: "0") < 10 else { return nil }
      default: guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
      }
    }
    return buffer[first..<quote]
  }

  /// The blob ids of the logs, for a history read from a tree.
  var blobIDs: Set<GitOID> { Set(ids.values) }

  /// The blob id of the log `name`, for a history read from a tree.
  func logID(_ name: String) -> GitOID? { ids[name] }

  /// The newest stamp in any log, so the local clock can move past it.
  ///
  /// A segment whose blob is in `known` (the logs of a tree this replica
  /// has already taken in, its own HEAD's) and every older segment of its
  /// replica are passed over: their stamps are behind the clock already.
  /// That spares a sync reading another replica's 30 MB import segment
  /// whole for its last line.
  func latestStamp(excluding known: Set<GitOID> = []) throws -> HLC? {
    var latest: HLC?
    for segments in segmentsByReplica() {
      for name in segments {
        if let id = ids[name], known.contains(id) { break }
        guard let bytes = try bytes(of: name), let line = Self.lastLine(of: bytes),
          let value = try? JSONValue(parsing: Array(line)), let op = try? Op(json: value), op.hlc.wall > 0
        else { continue }
        if latest.map({ $0 < op.hlc }) ?? true { latest = op.hlc }
        // Older segments hold only older stamps.
        break
      }
    }
    return latest
  }

  /// The last line of a log that is not empty, found from its end: a log is
  /// megabytes long, and only this line is wanted.
  static func lastLine(of bytes: [UInt8]) -> ArraySlice<UInt8>? {
    let newline = UInt8(ascii: "\n")
    var end = bytes.endIndex
    while end > bytes.startIndex, bytes[end - 1] == newline { end -= 1 }
    guard end > bytes.startIndex else { return nil }
    let start = bytes[..<end].lastIndex(of: newline).map { $0 + 1 } ?? bytes.startIndex
    return bytes[start..<end]
  }

  /// Parses complete lines; a line that is not an op is reported with its
  /// file and line number.
  package static func parse(_ bytes: ArraySlice<UInt8>, file: String) throws -> [Op] {
    try numbered(bytes, file: file, firstLine: 1).map(\.op)
  }

  /// Parses complete lines, each op with its 1-based line number in the
  /// whole file; `bytes` starts at line `firstLine`. A line longer than
  /// ``Limits/maximumOpLineBytes`` (which no Folio since the size limit
  /// writes; an older build or a hand could) is passed over, not parsed:
  /// the merge goes on for everything else, and the document it set is
  /// kept as this side has it (``TreeMerge``). A line that is not an op is
  /// reported with its file and line number.
  static func numbered(_ bytes: ArraySlice<UInt8>, file: String, firstLine: Int) throws
    -> [(line: Int, op: Op)]
  {
    var ops: [(line: Int, op: Op)] = []
    var lineNumber = firstLine - 1
    var start = bytes.startIndex
    while start < bytes.endIndex {
      lineNumber += 1
      guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { break }
      defer { start = newline + 1 }
      if newline == start { continue }
      if newline - start > Limits.maximumOpLineBytes { continue }
      do {
        ops.append((lineNumber, try Op(json: JSONValue(parsing: Array(bytes[start..<newline]), file: file))))
      } catch var error as FolioError {
        error.location = .init(file: file, line: lineNumber, column: error.location?.column ?? 1)
        throw error
      }
    }
    return ops
  }
}
