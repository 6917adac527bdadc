import FolioJSON
import FolioSystem

/// The append-only part of a table's order index, `<table>.log`: what
/// changed since the base was written, one JSON line per record. Writers
/// append under the index lock; readers read without it and ignore a torn
/// last line, which the next stat check repairs anyway.
///
/// The first line names the base generation it belongs to; a log left over
/// from another generation is ignored.
enum IndexLog {
  enum Record {
    /// A document's new entry, or nil for a document that is gone.
    case document(pk: String, entry: IndexEntry?)
    /// The table folder's stat data, checked at a time.
    case directory(FileStat, checkedAt: Int64)
  }

  static func header(generation: UInt64) -> [UInt8] {
    let line: JSONValue = ["folio-index-log": 1, "generation": .string(String(generation, radix: 16))]
    return line.compactBytes() + [UInt8(ascii: "\n")]
  }

  static func encode(_ record: Record) -> [UInt8] {
    let line: JSONValue
    switch record {
    case .document(let pk, let entry?):
      line = [
        "pk": .string(pk), "st": statArray(entry.stat, entry.checkedAt),
        "v": .array(entry.values.map { $0 ?? .null }),
      ]
    case .document(let pk, nil):
      line = ["pk": .string(pk), "gone": true]
    case .directory(let stat, let checkedAt):
      line = ["dir": statArray(stat, checkedAt)]
    }
    return line.compactBytes() + [UInt8(ascii: "\n")]
  }

  private static func statArray(_ stat: FileStat, _ checkedAt: Int64) -> JSONValue {
    .array([stat.inode, stat.size, stat.mtime, stat.ctime, checkedAt].map { .integer($0) })
  }

  private static func stat(from value: JSONValue?) -> (FileStat, Int64)? {
    guard let numbers = value?.arrayValue?.compactMap({ $0.numberText.flatMap { Int64($0) } }),
      numbers.count == 5
    else { return nil }
    return (FileStat(inode: numbers[0], size: numbers[1], mtime: numbers[2], ctime: numbers[3]), numbers[4])
  }

  /// The records of the log at `path` that belong to `generation`, the
  /// offset just past each, and the number of bytes they span; nil if the
  /// log is missing or belongs to another generation.
  static func read(_ path: String, generation: UInt64, keyCount: Int) -> (
    records: [Record], ends: [Int], size: Int
  )? {
    guard let bytes = try? FileSystem.read(path) else { return nil }
    var records: [Record] = []
    var ends: [Int] = []
    var start = 0
    var first = true
    while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
      guard let line = try? JSONValue(parsing: Array(bytes[start..<newline])) else { break }
      if first {
        guard line["generation"]?.stringValue == String(generation, radix: 16) else { return nil }
        first = false
      } else if let pk = line["pk"]?.stringValue {
        if line["gone"] == .bool(true) {
          records.append(.document(pk: pk, entry: nil))
        } else if let (stat, checkedAt) = stat(from: line["st"]), let values = line["v"]?.arrayValue,
          values.count == keyCount
        {
          let entry = IndexEntry(
            stat: stat, checkedAt: checkedAt, values: values.map { $0.isNull ? nil : $0 })
          records.append(.document(pk: pk, entry: entry))
        } else {
          break
        }
      } else if let (stat, checkedAt) = stat(from: line["dir"]) {
        records.append(.directory(stat, checkedAt: checkedAt))
      } else {
        break
      }
      start = newline + 1
      while ends.count < records.count { ends.append(start) }
    }
    return first ? nil : (records, ends, start)
  }
}
