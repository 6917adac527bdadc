import FolioSystem

/// Which blob each of a few paths held in every commit reachable from a
/// head: one walk of the history, which ``Store/history(table:pk:)`` reads
/// a document's versions from and ``Store/blame(table:pk:)`` the commits
/// that brought each op.
struct PathHistory {
  /// One commit of the walk.
  struct Step {
    var commit: GitOID
    /// The parents' places in ``PathHistory/steps``.
    var parents: [Int]
    /// The blob at each path, in the order the paths were given; nil where
    /// the commit has none.
    var blobs: [GitOID?]
  }

  /// Every commit reachable from the head, each after its parents.
  let steps: [Step]

  init(repository: GitRepository, head: GitOID, paths: [String]) throws {
    var steps: [Step] = []
    var place: [GitOID: Int] = [:]
    for id in try repository.ancestry(of: head) {
      let commit = try repository.commit(id)
      let tree = try commit.tree()
      place[id] = steps.count
      steps.append(
        Step(
          commit: id, parents: commit.parentIDs.compactMap { place[$0] },
          blobs: paths.map { tree.blobID(at: $0) }))
    }
    self.steps = steps
  }

  /// The commits that made a new version of path `index`: its blob there
  /// differs from every parent's (a root commit's counts when it has the
  /// path). A merge that took one side's version makes none.
  func versions(of index: Int) -> [Int] {
    steps.indices.filter { at in
      let blob = steps[at].blobs[index]
      if steps[at].parents.isEmpty { return blob != nil }
      return steps[at].parents.allSatisfy { steps[$0].blobs[index] != blob }
    }
  }

  /// Each distinct blob path `index` held, with the first commit in the
  /// walk that held it, oldest first.
  func firstAppearances(of index: Int) -> [(step: Int, blob: GitOID)] {
    var seen = Set<GitOID>()
    var result: [(Int, GitOID)] = []
    for (at, step) in steps.enumerated() {
      if let blob = step.blobs[index], seen.insert(blob).inserted { result.append((at, blob)) }
    }
    return result
  }
}
