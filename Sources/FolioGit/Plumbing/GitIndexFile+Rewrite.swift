internal import Clibgit2
import FolioSystem
import Glibc

extension GitIndexFile {
  /// Writes the index at `path` as this file's entries with `edits`
  /// applied (each replaces every stage of its path, or removes them;
  /// in path order, one per path), through `index.lock` and a rename.
  ///
  /// Unchanged entries are copied as they are, in runs, so the cost is a
  /// copy and a hash of the file, not an entry's parse each. Extensions are
  /// left out: the cached tree would be stale where the edits are, and git
  /// and libgit2 rebuild what they need.
  func write(to path: String, applying edits: [GitIndex.Edit]) throws {
    let keys = edits.map { Array($0.path.utf8) }
    // Which existing entries stay: all but those at an edited path.
    var kept: [Range<Int>] = []
    var inserts: [(before: Int, edit: Int)] = []
    var position = 0
    for (j, key) in keys.enumerated() {
      let at = firstPosition(atOrAfter: key)
      precondition(at >= position, "edits are not in path order")
      if at > position { kept.append(position..<at) }
      var end = at
      while end < entries.count, Self.compare(entries[end].path, key) == 0 { end += 1 }
      inserts.append((at, j))
      position = end
    }
    if position < entries.count { kept.append(position..<entries.count) }
    let added = edits.filter { $0.entry != nil }.count
    let count = kept.reduce(0) { $0 + $1.count } + added
    // Entries copied from a version 3 file may carry extended flags, so
    // the file keeps version 3 when it had it.
    let writeVersion3 =
      version == 3 || edits.contains { ($0.entry?.flags_extended ?? 0) & GitIndex.extendedMask != 0 }
    try GitIndex.writeIndexFile(at: path) { writer in
      writer.appendHeader(entries: count, extended: writeVersion3)
      var keptIndex = 0
      func copyKept(upTo limit: Int) throws {
        while keptIndex < kept.count, kept[keptIndex].lowerBound < limit {
          let range = kept[keptIndex]
          let upper = min(range.upperBound, limit)
          let start = entries[range.lowerBound].offset
          let end = entries[upper - 1].offset + entries[upper - 1].length
          try writer.appendRaw(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
          if upper == range.upperBound {
            keptIndex += 1
          } else {
            kept[keptIndex] = upper..<range.upperBound
          }
        }
      }
      for (before, j) in inserts {
        try copyKept(upTo: before)
        guard var entry = edits[j].entry else { continue }
        try edits[j].path.withCString { pointer in
          entry.path = pointer
          try writer.append(entry)
        }
      }
      try copyKept(upTo: entries.count)
    }
  }
}
