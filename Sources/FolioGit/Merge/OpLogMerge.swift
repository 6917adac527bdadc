/// Merges three versions of one op log file as sets of lines: a line stays
/// if both sides kept it or one side added it since the base, so appends
/// from both sides survive and lines dropped by compaction stay dropped.
/// The result is sorted by HLC, so every replica writes the same bytes.
enum OpLogMerge {
  static func merge(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> [UInt8] {
    // Fast path: one writer per file, so usually one side extends the other.
    if ours.starts(with: theirs) && theirs.starts(with: base) { return ours }
    if theirs.starts(with: ours) && ours.starts(with: base) { return theirs }
    let baseLines = Set(lines(base))
    let ourLines = lines(ours)
    let theirLines = lines(theirs)
    let ourSet = Set(ourLines)
    let theirSet = Set(theirLines)
    var kept = Set<[UInt8]>()
    for line in ourLines where theirSet.contains(line) || !baseLines.contains(line) { kept.insert(line) }
    for line in theirLines where ourSet.contains(line) || !baseLines.contains(line) { kept.insert(line) }
    let sorted = kept.sorted { a, b in
      let (ka, kb) = (sortKey(a), sortKey(b))
      return ka == kb ? a.lexicographicallyPrecedes(b) : ka.lexicographicallyPrecedes(kb)
    }
    var result: [UInt8] = []
    for line in sorted {
      result += line
      result.append(UInt8(ascii: "\n"))
    }
    return result
  }

  /// Complete lines only; a torn tail never reaches a commit.
  static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
    bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map(Array.init)
  }

  /// The HLC text of a line (`"hlc":"…"`), which sorts like the stamp.
  private static func sortKey(_ line: [UInt8]) -> [UInt8] {
    let marker = Array(#""hlc":""#.utf8)
    guard let start = line.firstRange(of: marker)?.upperBound,
      let end = line[start...].firstIndex(of: UInt8(ascii: "\""))
    else { return [] }
    return Array(line[start..<end])
  }
}
