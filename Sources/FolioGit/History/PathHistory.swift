import FolioSystem

/// Which blob each of a few paths held in every commit reachable from a
/// head: one walk of the history, which ``Store/history(table:pk:)`` reads
/// a document's versions from and ``Store/blame(table:pk:)`` the commits
/// that brought each op.
///
/// The walk itself reads only commits. A path's blob in a commit is looked
/// up when first asked for, folder by folder, and a name already looked up
/// in a folder (by the folder's id) is not looked up again: a table's
/// folder of 100,000 files is a large object, which only the questions
/// that need it pay for.
final class PathHistory {
  /// One commit of the walk.
  struct Step {
    var commit: GitOID
    /// The commit's root tree.
    var tree: GitOID
    /// The parents' places in ``PathHistory/steps``.
    var parents: [Int]
  }

  /// Every commit reachable from the head, each after its parents.
  let steps: [Step]
  private let paths: [[String]]
  private let repository: GitRepository
  /// Names already looked up, by folder id: the entry's id and whether it
  /// is a folder, or nil when there is none.
  private var lookups: [GitOID: [String: (id: GitOID, isTree: Bool)?]] = [:]
  /// Answers already given, by root tree and path.
  private var answers: [GitOID: [Int: GitOID?]] = [:]

  init(repository: GitRepository, head: GitOID, paths: [String]) throws {
    self.repository = repository
    self.paths = paths.map { $0.split(separator: "/").map(String.init) }
    var steps: [Step] = []
    var place: [GitOID: Int] = [:]
    for id in try repository.ancestry(of: head) {
      let commit = try repository.commit(id)
      place[id] = steps.count
      steps.append(Step(commit: id, tree: commit.treeID, parents: commit.parentIDs.compactMap { place[$0] }))
    }
    self.steps = steps
  }

  /// The blob at path `index` in commit `step`, nil when there is none.
  func blob(_ step: Int, _ index: Int) throws -> GitOID? {
    let root = steps[step].tree
    if let known = answers[root]?[index] { return known }
    var folder = root
    var found: GitOID?
    for (depth, name) in paths[index].enumerated() {
      guard let (id, isTree) = try entry(name, in: folder) else { break }
      if depth == paths[index].count - 1 {
        found = isTree ? nil : id
      } else {
        guard isTree else { break }
        folder = id
      }
    }
    answers[root, default: [:]][index] = .some(found)
    return found
  }

  /// The commits that made a new version of path `index`: its blob there
  /// differs from every parent's (a root commit's counts when it has the
  /// path). A merge that took one side's version makes none.
  func versions(of index: Int) throws -> [Int] {
    try steps.indices.filter { at in
      let blob = try blob(at, index)
      if steps[at].parents.isEmpty { return blob != nil }
      return try steps[at].parents.allSatisfy { try self.blob($0, index) != blob }
    }
  }

  /// Each distinct blob path `index` held, with the first commit in the
  /// walk that held it, oldest first.
  func firstAppearances(of index: Int) throws -> [(step: Int, blob: GitOID)] {
    var seen = Set<GitOID>()
    var result: [(Int, GitOID)] = []
    for at in steps.indices {
      if let blob = try blob(at, index), seen.insert(blob).inserted { result.append((at, blob)) }
    }
    return result
  }

  private func entry(_ name: String, in folder: GitOID) throws -> (id: GitOID, isTree: Bool)? {
    if let known = lookups[folder]?[name] { return known }
    let found = try repository.tree(folder).entry(named: name)
    lookups[folder, default: [:]][name] = .some(found)
    return found
  }
}
