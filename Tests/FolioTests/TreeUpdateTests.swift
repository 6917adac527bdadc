import FolioTestSupport
import Foundation
import Testing

@testable import FolioGit

/// A folder with many changes is rewritten by Folio in one pass; every
/// other change goes to libgit2's tree builder. Replicas must write the
/// same tree for the same merge, so the pass must give libgit2's tree byte
/// for byte, whatever the names, modes and folders around it.
struct TreeUpdateTests {
  typealias Change = (path: String, id: GitOID?, mode: UInt32)

  static let stems = ["a", "a.json", "a-b", "a0", "b", "sub", "sub.json", "sub-x", "z", "é", "A", "_"]

  /// Whether the folder `t` of `tree` is large enough to be rewritten in
  /// one pass whatever the number of changes.
  static func isLarge(_ tree: GitTree, _ repository: GitRepository) throws -> Bool {
    try tree.blobs(in: "t", repository: repository).count >= GitRepository.largeFolderEntries
  }

  func name(_ random: inout SplitMix) -> String {
    Self.stems.randomElement(using: &random)! + String(Int.random(in: 0..<400, using: &random))
  }

  func mode(_ random: inout SplitMix) -> UInt32 {
    [0, 0, 0, 0o100755, 0o120000].randomElement(using: &random)!
  }

  @Test func rewritingAFolderGivesLibgit2sTree() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let repository = try GitRepository.initialize(workTree: scratch.path)
    let seed = testSeed()
    var random = SplitMix(seed: seed)
    try reportingSeed(seed) {
      for round in 0..<25 {
        // A folder of files, with a subfolder named among them.
        var initial: [Change] = []
        var names = Set<String>()
        // Odd rounds: a large folder with a few changes, rewritten in one
        // pass for its size.
        let large = round % 2 == 1
        for _ in 0..<Int.random(in: large ? 2000..<2500 : 80..<300, using: &random) {
          let name = name(&random)
          guard names.insert(name).inserted else { continue }
          initial.append(("t/" + name, try repository.writeBlob(Array(name.utf8)), mode(&random)))
        }
        initial.append(("t/sub/inner", try repository.writeBlob([1]), 0))
        initial.append(("other/x", try repository.writeBlob([2]), 0))
        let base = try repository.tree(try repository.libgit2UpdatedTree(nil, setting: initial))
        // Sets and removals in it, now and then one libgit2 alone can take
        // (a gitlink, a file inside the subfolder, which libgit2 opens the
        // folder again for), and a few elsewhere.
        var changes: [Change] = []
        var touched = Set<String>()
        let existing = names.sorted()
        let wanted = Int.random(in: large ? 1..<10 : 64..<200, using: &random)
        while changes.count < wanted {
          let removal = !existing.isEmpty && Int.random(in: 0..<4, using: &random) == 0
          let name = removal ? existing.randomElement(using: &random)! : name(&random)
          guard touched.insert(name).inserted else { continue }
          let id = removal ? nil : try repository.writeBlob(Array((name + "!").utf8))
          changes.append(("t/" + name, id, mode(&random)))
        }
        if round % 5 == 1 { changes.append(("t/gitlink", try repository.writeBlob([3]), 0o160000)) }
        if round % 5 == 2 { changes.append(("t/sub/new", try repository.writeBlob([4]), 0)) }
        changes.append(("other/y", try repository.writeBlob([5]), 0))
        let expected = try repository.libgit2UpdatedTree(base, setting: changes)
        let rewritten = try repository.rewrittenFolders(base, setting: changes)
        #expect(large == (try Self.isLarge(base, repository)), "round \(round), seed \(seed)")
        #expect(
          rewritten.folders.isEmpty == (round % 5 == 1 || round % 5 == 2),
          "round \(round), seed \(seed) (replay with FOLIO_TEST_SEED=\(seed))")
        #expect(
          try repository.updatedTree(base, setting: changes) == expected,
          "round \(round), seed \(seed) (replay with FOLIO_TEST_SEED=\(seed))")
      }
    }
  }
}
