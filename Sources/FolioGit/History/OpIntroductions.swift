import FolioCore
import FolioSystem
import Glibc

/// Finds the commit that brought each op: the first in the walk whose copy
/// of the op's log holds its line.
///
/// One replica writes each log and only appends to it, so its versions
/// are, until `folio compact` rewrites it, prefixes of one another: the
/// first version at least as long as the line's end holds the line at the
/// same offset. When HEAD's version is a prefix of the working log, that
/// holds for every version since the last one that shrank (a compaction),
/// and the versions' sizes, read from the object headers, are all it takes:
/// no other version is read. Ops from before that are checked by reading
/// the version their offset names, and when that fails (the log was
/// rewritten since), the versions are searched for the line itself.
struct OpIntroductions {
  private struct Version {
    var step: Int
    var blob: GitOID
    /// Its size, from the object header.
    var size: Int
    /// The longest of this version and those before it, so that the
    /// search by length can halve.
    var reach: Int
  }

  private let repository: GitRepository
  /// Each log's bytes in the working tree.
  private var logs: [String: [UInt8]] = [:]
  private var versions: [String: [Version]] = [:]
  /// For each log whose HEAD version the working log extends: where the
  /// versions that are all prefixes of it start.
  private var appendedFrom: [String: Int] = [:]
  private var blobs: [GitOID: [UInt8]] = [:]

  /// - Parameters:
  ///   - logs: the working tree's logs, by path.
  ///   - paths: the walk's paths; the logs among them are looked at.
  ///   - cacheDirectory: where ``LogPrefixCache`` keeps what it learns.
  init(
    repository: GitRepository, logs: [String: [UInt8]], walk: PathHistory?, paths: [String],
    cacheDirectory: String
  ) throws {
    self.repository = repository
    var prefixes = LogPrefixCache(directory: cacheDirectory)
    defer { prefixes.save() }
    for (index, path) in paths.enumerated() where path.hasPrefix(Store.opsFolder + "/") {
      self.logs[path] = logs[path] ?? []
      var found: [Version] = []
      var lastShrink = 0
      for (step, blob) in try walk?.firstAppearances(of: index) ?? [] {
        let size = try repository.objectSize(blob)
        if let previous = found.last, size < previous.size { lastShrink = found.count }
        found.append(Version(step: step, blob: blob, size: size, reach: max(size, found.last?.reach ?? 0)))
      }
      versions[path] = found
      if let walk, let last = walk.steps.indices.last, let head = try walk.blob(last, index),
        let newest = found.last, newest.blob == head,
        try prefixes.isPrefix(
          head, size: newest.size, of: self.logs[path]!, logPath: path, repository: repository)
      {
        appendedFrom[path] = lastShrink
      }
    }
  }

  /// The walk step of the commit that brought `entry`'s op, or nil when no
  /// commit holds it yet.
  mutating func step(of entry: OpLog.Entry) throws -> Int? {
    guard let bytes = logs[entry.file], entry.bytes.upperBound <= bytes.count,
      let found = versions[entry.file], !found.isEmpty
    else { return nil }
    let end = entry.bytes.upperBound
    if let from = appendedFrom[entry.file] {
      // Sizes do not fall from `from` on: the first version that reaches
      // the line's end is the first to hold it.
      let first = (from..<found.count).partitionPoint { found[$0].size >= end }
      if first == found.count { return nil }
      if first > from || from == 0 { return found[first].step }
    }
    let line = Array(bytes[entry.bytes])
    let reaching = found.indices.partitionPoint { found[$0].reach >= end }
    if reaching < found.count {
      let blob = try read(found[reaching].blob)
      if blob.count >= end && blob[(end - line.count)..<end].elementsEqual(line) {
        return found[reaching].step
      }
    }
    // The log was rewritten: the first version holding the line, by
    // halving, since a version that held an op keeps it until every
    // replica has it.
    let holding = try found.indices.partitionPoint { Self.contains(try read(found[$0].blob), line) }
    guard holding < found.count, Self.contains(try read(found[holding].blob), line) else { return nil }
    return found[holding].step
  }

  private mutating func read(_ blob: GitOID) throws -> [UInt8] {
    if let known = blobs[blob] { return known }
    let bytes = try repository.blob(blob)
    blobs[blob] = bytes
    return bytes
  }

  /// Whether `haystack` holds `needle` as a whole line.
  private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    haystack.withUnsafeBytes { outer in
      needle.withUnsafeBytes { inner in
        guard let base = outer.baseAddress, let wanted = inner.baseAddress, inner.count > 0 else {
          return false
        }
        var at = 0
        // Lines start at 0 or after a newline; each is compared with memcmp.
        while at + inner.count <= outer.count {
          let end = at + inner.count
          if (end == outer.count || outer[end] == UInt8(ascii: "\n"))
            && memcmp(base + at, wanted, inner.count) == 0
          {
            return true
          }
          guard let newline = memchr(base + at, Int32(UInt8(ascii: "\n")), outer.count - at) else {
            return false
          }
          at = base.distance(to: UnsafeRawPointer(newline)) + 1
        }
        return false
      }
    }
  }
}
