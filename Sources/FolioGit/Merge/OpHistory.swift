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

  /// The raw op log files, by file name.
  var files: [String: [UInt8]]

  /// Reads the op logs of `tree`.
  init(tree: GitTree?, repository: GitRepository) throws {
    var files: [String: [UInt8]] = [:]
    if let tree {
      for (name, id) in try tree.blobs(in: Store.opsFolder, repository: repository)
      where name.hasSuffix(".ndjson") {
        files[name] = try repository.blob(id)
      }
    }
    self.files = files
  }

  package init(files: [String: [UInt8]]) {
    self.files = files
  }

  /// The ops this history has that `base` does not, by document. Each file
  /// usually extends the base's copy, so only the new tail is parsed.
  package func ops(since base: OpHistory?) throws -> [DocumentKey: [Op]] {
    var result: [DocumentKey: [Op]] = [:]
    for name in files.keys.sorted() {
      let bytes = files[name]!
      let baseBytes = base?.files[name] ?? []
      let displayName = Store.opsFolder + "/" + name
      for (_, op) in try Self.newOps(bytes, since: baseBytes, file: displayName) {
        result[DocumentKey(table: op.table, pk: op.pk), default: []].append(op)
      }
    }
    return result
  }

  /// The ops of one log file that its base copy does not have, with their
  /// line numbers. A file usually extends its base, so only the new tail is
  /// parsed.
  static func newOps(_ bytes: [UInt8], since baseBytes: [UInt8], file: String) throws
    -> [(line: Int, op: Op)]
  {
    // A log is megabytes long: compared and counted through its buffer, not
    // element by element through the generic collection methods.
    let extendsBase =
      bytes.count >= baseBytes.count
      && bytes.withUnsafeBytes { whole in
        baseBytes.withUnsafeBytes { base in
          base.isEmpty || memcmp(whole.baseAddress!, base.baseAddress!, base.count) == 0
        }
      }
    if extendsBase {
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

  /// The newest stamp in any log, so the local clock can move past it.
  func latestStamp() -> HLC? {
    var latest: HLC?
    for bytes in files.values {
      guard let line = Self.lastLine(of: bytes) else { continue }
      if let value = try? JSONValue(parsing: Array(line)), let op = try? Op(json: value), op.hlc.wall > 0,
        latest.map({ $0 < op.hlc }) ?? true
      {
        latest = op.hlc
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
