import FolioTestSupport
import Foundation
import Testing

@testable import FolioGit

/// The tree diff a merge and a checkout read (``GitRepository/fileChanges(from:to:)``)
/// walks both trees side by side and skips unchanged folders: it must name
/// the same files, ids and modes as `git diff-tree -r` on random trees with
/// names that sort around `/` (`a`, `a.b`, `a/…`, `a0`), files that become
/// folders, links and executables.
struct FileChangesTests {
  typealias Change = (path: String, id: GitOID?, mode: UInt32)

  static let names = ["a", "a.b", "a-c", "a0", "ab", "b", "sub", "sub.json", "z", "é"]

  func randomTree(_ repository: GitRepository, _ random: inout SplitMix, depth: Int = 0) throws -> [Change] {
    var entries: [Change] = []
    for name in Self.names where Int.random(in: 0..<3, using: &random) > 0 {
      if depth < 2 && Int.random(in: 0..<3, using: &random) == 0 {
        for inner in try randomTree(repository, &random, depth: depth + 1) {
          entries.append((name + "/" + inner.path, inner.id, inner.mode))
        }
      } else {
        let content = Array("\(name) \(Int.random(in: 0..<3, using: &random))".utf8)
        let mode: UInt32 = [0, 0, 0, 0o100755, 0o120000].randomElement(using: &random)!
        entries.append((name, try repository.writeBlob(content), mode))
      }
    }
    return entries
  }

  @Test func namesWhatGitDiffTreeNames() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let repository = try GitRepository.initialize(workTree: scratch.path)
    let seed = testSeed()
    var random = SplitMix(seed: seed)
    try reportingSeed(seed) {
      for round in 0..<40 {
        let initial = try randomTree(repository, &random)
        let first = try repository.tree(try repository.libgit2UpdatedTree(nil, setting: initial))
        // The second shares most of the first: the same files with a few
        // of a random tree laid over them (a file where a folder was, or
        // the other way, replaces it).
        var files = Dictionary(initial.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        if round % 4 == 0 { files = [:] }
        let over = try randomTree(repository, &random)
        for change in over.prefix(Int.random(in: 0...over.count, using: &random)) {
          for path in files.keys
          where path.hasPrefix(change.path + "/") || change.path.hasPrefix(path + "/") {
            files[path] = nil
          }
          files[change.path] = change
        }
        let second = try repository.tree(try repository.libgit2UpdatedTree(nil, setting: Array(files.values)))
        let mine = try repository.fileChanges(from: first, to: second).map {
          "\($0.path) \($0.old?.description ?? "-") \($0.new?.description ?? "-") \($0.oldMode) \($0.newMode)"
        }
        let output = try git(
          [
            "-c", "core.quotePath=false", "diff-tree", "-r", "--no-renames", "--raw", "--abbrev=40",
            first.id.description, second.id.description,
          ],
          in: scratch.path
        ).output
        let zero = String(repeating: "0", count: 40)
        let theirs = output.split(separator: "\n").map { line -> String in
          // :OLDMODE NEWMODE OLDID NEWID STATUS\tPATH
          let parts = line.split(separator: "\t", maxSplits: 1)
          let fields = parts[0].dropFirst().split(separator: " ")
          let oldID = fields[2] == zero ? "-" : String(fields[2])
          let newID = fields[3] == zero ? "-" : String(fields[3])
          return
            "\(parts[1]) \(oldID) \(newID) \(UInt32(fields[0], radix: 8)!) \(UInt32(fields[1], radix: 8)!)"
        }
        // git lists a file that became a folder, or the other way, in its
        // own order; compare sorted.
        #expect(mine.sorted() == theirs.sorted(), "round \(round), seed \(seed)")
      }
    }
  }
}
