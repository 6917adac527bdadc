import FolioTestSupport
import Foundation
import Testing

@testable import FolioGit

/// The index a checkout writes itself: git reads it as its own, its
/// cached tree is the commit's, and it keeps what it is not told to change.
struct CheckoutIndexTests {
  /// A repository with a commit of a few folders, and a second commit
  /// that changes, adds (a new folder too) and removes files.
  func twoCommits(_ scratch: Scratch) throws -> (first: String, second: String) {
    let path = scratch.path
    try git(["init", "-q"], in: path)
    for (file, text) in [
      ("a.json", "1"), ("t/x.json", "2"), ("t/y.json", "3"), ("t/sub/z", "4"), ("u/w", "5"),
    ] {
      try FileManager.default.createDirectory(
        atPath: path + "/" + (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + file))
    }
    try git(["add", "-A"], in: path)
    try git(["commit", "-q", "-m", "first"], in: path)
    let first = try git(["rev-parse", "HEAD"], in: path).output.trimmingCharacters(
      in: .whitespacesAndNewlines)
    try Data("9".utf8).write(to: URL(fileURLWithPath: path + "/t/x.json"))
    try FileManager.default.removeItem(atPath: path + "/t/y.json")
    try FileManager.default.createDirectory(atPath: path + "/v", withIntermediateDirectories: true)
    try Data("6".utf8).write(to: URL(fileURLWithPath: path + "/v/new"))
    try Data("7".utf8).write(to: URL(fileURLWithPath: path + "/t.json"))
    try git(["add", "-A"], in: path)
    try git(["commit", "-q", "-m", "second"], in: path)
    let second = try git(["rev-parse", "HEAD"], in: path).output.trimmingCharacters(
      in: .whitespacesAndNewlines)
    // Back at the first commit, as a checkout would start.
    try git(["reset", "-q", "--hard", first], in: path)
    return (first, second)
  }

  /// The edits that move the index from `first` to `second`.
  func edits(_ repository: GitRepository, _ scratch: Scratch, from first: String, to second: String) throws
    -> [GitIndex.Edit]
  {
    let old = try repository.commit(GitOID(hex: first)!).tree()
    let new = try repository.commit(GitOID(hex: second)!).tree()
    var edits: [GitIndex.Edit] = []
    for change in try repository.fileChanges(from: old, to: new) {
      guard let id = change.new else {
        edits.append(.init(path: change.path, entry: nil))
        continue
      }
      var entry = GitIndex.entry(id: id, filePath: nil)
      entry.mode = change.newMode
      edits.append(.init(path: change.path, entry: entry))
    }
    return edits.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
  }

  func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

  @Test func theIndexIsTheCommitsWithItsCachedTree() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let (first, second) = try twoCommits(scratch)
    let repository = try #require(try GitRepository.open(workTree: scratch.path))
    let index = try repository.index()
    try index.writeApplying(
      try edits(repository, scratch, from: first, to: second),
      matching: try repository.commit(GitOID(hex: second)!).tree(), repository: repository)
    let staged = try git(["ls-files", "-s"], in: scratch.path).output
    let committed = try git(["ls-tree", "-r", second], in: scratch.path).output
    #expect(
      lines(staged).map { $0.replacingOccurrences(of: " 0\t", with: "\t") }
        == lines(committed).map { $0.replacingOccurrences(of: " blob ", with: " ") })
    // The cached tree is there, and is the commit's: git's write-tree
    // trusts it, and agrees with a tree built from the entries alone.
    let bytes = try #require(FileManager.default.contents(atPath: scratch.path + "/.git/index"))
    #expect(bytes.range(of: Data("TREE".utf8)) != nil)
    let tree = try git(["rev-parse", second + "^{tree}"], in: scratch.path).output
    #expect(try git(["write-tree"], in: scratch.path).output == tree)
    try git(["read-tree", second], in: scratch.path)  // rebuilds the cache from scratch
    #expect(try git(["write-tree"], in: scratch.path).output == tree)
    // libgit2 reads it too.
    let reread = try repository.index()
    try reread.readFromDisk()
    #expect(try reread.writeTree(to: repository).description + "\n" == tree)
  }

  @Test func anEntryTheCommitLacksStaysAndNoTreeIsCached() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let (first, second) = try twoCommits(scratch)
    try Data("extra".utf8).write(to: URL(fileURLWithPath: scratch.path + "/t/extra"))
    try git(["add", "t/extra"], in: scratch.path)
    let repository = try #require(try GitRepository.open(workTree: scratch.path))
    let index = try repository.index()
    try index.readFromDisk()
    try index.writeApplying(
      try edits(repository, scratch, from: first, to: second),
      matching: try repository.commit(GitOID(hex: second)!).tree(), repository: repository)
    let staged = try git(["ls-files"], in: scratch.path).output
    #expect(lines(staged) == ["a.json", "t.json", "t/extra", "t/sub/z", "t/x.json", "u/w", "v/new"])
    let bytes = try #require(FileManager.default.contents(atPath: scratch.path + "/.git/index"))
    #expect(bytes.range(of: Data("TREE".utf8)) == nil)
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.contains("A  t/extra"))
  }
}
