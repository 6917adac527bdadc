import FolioCore
import FolioSystem
import Glibc

/// Finds the commit that brought each op: the first in the walk whose copy
/// of the op's log holds its line.
///
/// One replica writes each log and only appends to it, so its versions
/// are, until `folio compact` rewrites it, prefixes of one another: the
/// first version at least as long as the line's end holds the line at the
/// same offset. That is checked with one read of that version; when it
/// fails (the log was compacted since), the versions are searched for the
/// line itself.
struct OpIntroductions {
  private struct Version {
    var step: Int
    var blob: GitOID
    /// The longest of this version and those before it, so that the
    /// search by length can halve.
    var reach: Int
  }

  private let repository: GitRepository
  /// Each log's bytes in the working tree.
  private var logs: [String: [UInt8]] = [:]
  private var versions: [String: [Version]] = [:]
  private var blobs: [GitOID: [UInt8]] = [:]

  /// - Parameter paths: the walk's paths; the logs among them are read.
  init(repository: GitRepository, root: String, walk: PathHistory?, paths: [String]) throws {
    self.repository = repository
    for (index, path) in paths.enumerated() where path.hasPrefix(Store.opsFolder + "/") {
      logs[path] = try FileSystem.read(root + "/" + path) ?? []
      var found: [Version] = []
      for (step, blob) in walk?.firstAppearances(of: index) ?? [] {
        let size = try repository.objectSize(blob)
        found.append(Version(step: step, blob: blob, reach: max(size, found.last?.reach ?? 0)))
      }
      versions[path] = found
    }
  }

  /// The walk step of the commit that brought `entry`'s op, or nil when no
  /// commit holds it yet.
  mutating func step(of entry: OpLog.Entry) throws -> Int? {
    guard let bytes = logs[entry.file], entry.bytes.upperBound <= bytes.count,
      let found = versions[entry.file], !found.isEmpty
    else { return nil }
    let line = Array(bytes[entry.bytes])
    let end = entry.bytes.upperBound
    var low = 0
    var high = found.count
    while low < high {
      let middle = (low + high) / 2
      if found[middle].reach >= end { high = middle } else { low = middle + 1 }
    }
    if low < found.count {
      let blob = try read(found[low].blob)
      if blob.count >= end && blob[(end - line.count)..<end].elementsEqual(line) { return found[low].step }
    }
    // The log was rewritten: the first version holding the line, by
    // halving, since a version that held an op keeps it until every
    // replica has it.
    low = 0
    high = found.count
    while low < high {
      let middle = (low + high) / 2
      if Self.contains(try read(found[middle].blob), line) { high = middle } else { low = middle + 1 }
    }
    guard low < found.count, Self.contains(try read(found[low].blob), line) else { return nil }
    return found[low].step
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
