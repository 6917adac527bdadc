import FolioCore
import FolioJSON
import FolioSystem

extension OpHistory {
  /// The ops of one document in every log of this history, in log-name
  /// order. Each log is searched for the document's pk text and only the
  /// lines holding it are parsed: a log is megabytes long (an import's is
  /// one line per document), and a merge that needs one document's older
  /// ops must not parse every other document's.
  ///
  /// - Parameters:
  ///   - found: ops already found per log blob, shared by the calls of one
  ///     merge: a log no commit appended to is searched once however many
  ///     commits hold it.
  ///   - tableName: the name each op's table has now (see
  ///     ``Config/currentTableName(_:)``).
  func ops(
    of key: DocumentKey, found: inout [GitOID: [Op]], tableName: (String) -> String
  ) throws -> [Op] {
    var result: [Op] = []
    for name in names.sorted() {
      if let id = logID(name), let known = found[id] {
        result += known
        continue
      }
      let ops = try Self.ops(
        of: key, in: try bytes(of: name) ?? [], file: Store.opsFolder + "/" + name, tableName: tableName)
      if let id = logID(name) { found[id] = ops }
      result += ops
    }
    return result
  }

  /// The ops of `key` in one log. Folio writes a pk as compact JSON after
  /// `"pk":`, so every line of the document holds that text; a line that
  /// holds it for another reason is parsed and passed over.
  static func ops(
    of key: DocumentKey, in bytes: [UInt8], file: String, tableName: (String) -> String
  ) throws -> [Op] {
    let marker = Array("\"pk\":".utf8) + JSONValue.string(key.pk).compactBytes()
    let newline = UInt8(ascii: "\n")
    var ops: [Op] = []
    try bytes.withUnsafeBufferPointer { buffer in
      var from = 0
      while let at = buffer.firstOffset(of: marker, from: from) {
        var start = at
        while start > 0, buffer[start - 1] != newline { start -= 1 }
        guard let end = buffer[at...].firstIndex(of: newline) else { break }  // no whole line yet
        from = end + 1
        if end - start > Limits.maximumOpLineBytes { continue }
        do {
          var op = try Op(json: JSONValue(parsing: Array(buffer[start..<end]), file: file))
          op.table = tableName(op.table)
          if DocumentKey(table: op.table, pk: op.pk) == key { ops.append(op) }
        } catch var error as FolioError {
          let line = buffer[..<start].reduce(1) { $1 == newline ? $0 + 1 : $0 }
          error.location = .init(file: file, line: line, column: error.location?.column ?? 1)
          throw error
        }
      }
    }
    return ops
  }
}
