internal import Clibgit2
import Dispatch
import FolioCore
import FolioJSON
import Synchronization

/// The op histories of one merge, and the replay of one document.
///
/// Replaying both sides' new ops on the base document equals replaying every
/// op in HLC order only when each new op is later than every op the base
/// already holds for that document. A replica that worked offline can bring
/// an op older than one in the base; then the document is rewound: Folio
/// walks back from the base to the newest commit whose ops for the document
/// all come before the rest, and replays from there. So the result is always
/// the document that all its ops give in HLC order, whoever merges, in
/// whatever order.
final class MergeContext {
  let merge: TreeMerge
  let base: GitTree?
  let baseCommit: GitOID?
  let ours: (tree: GitTree, stamp: HLC)
  let theirs: (tree: GitTree, stamp: HLC)
  let baseHistory: OpHistory
  let ourHistory: OpHistory
  let theirHistory: OpHistory
  let ourOps: [OpHistory.DocumentKey: [Op]]
  let theirOps: [OpHistory.DocumentKey: [Op]]
  /// One document's ops per log blob, found while resolving it (see
  /// ``OpHistory/ops(of:found:tableName:)``); emptied for the next.
  private var found: (key: OpHistory.DocumentKey, ops: [GitOID: [Op]])?
  /// The conflicts the resolutions so far recorded, in the order met.
  private(set) var conflicts: [Conflict] = []

  init(
    merge: TreeMerge, base: GitTree?, baseCommit: GitOID?, ours: (tree: GitTree, stamp: HLC),
    theirs: (tree: GitTree, stamp: HLC)
  ) throws {
    self.merge = merge
    self.base = base
    self.baseCommit = baseCommit
    self.ours = ours
    self.theirs = theirs
    baseHistory = try OpHistory(tree: base, repository: merge.repository, cache: merge.opLogs)
    ourHistory = try OpHistory(tree: ours.tree, repository: merge.repository, cache: merge.opLogs)
    theirHistory = try OpHistory(tree: theirs.tree, repository: merge.repository, cache: merge.opLogs)
    let config = merge.config
    ourOps = try ourHistory.ops(since: baseHistory, tableName: config.currentTableName)
    theirOps = try theirHistory.ops(since: baseHistory, tableName: config.currentTableName)
  }

  /// The newest stamp of any line of the base's logs (see
  /// ``OpHistory/newestStampOfAnyLine()``): a log that cannot be read here
  /// is read by the full parse, which says why.
  private lazy var newestInBase: HLC?? = (try? baseHistory.newestStampOfAnyLine()) ?? nil

  /// Whether ops from `earliest` on come after every op of the base, so that
  /// no document they touch needs rewinding and the base's ops need not be
  /// read. Replicas that fetch before they write keep it so, as each one's
  /// clock moves past every stamp it merges.
  private func followTheBase(from earliest: HLC?) -> Bool {
    guard let earliest else { return true }
    switch newestInBase {
    case .none: return false  // a line only a full parse can read
    case .some(.none): return true
    case .some(.some(let newest)): return !(earliest < newest)
    }
  }

  /// Whether every new op on either side comes after every op of the base.
  private lazy var newOpsFollowTheBase: Bool = {
    var earliest: HLC?
    for ops in [ourOps, theirOps] {
      for list in ops.values {
        for op in list where earliest.map({ op.hlc < $0 }) ?? true { earliest = op.hlc }
      }
    }
    return followTheBase(from: earliest)
  }()

  /// The ops of `key` in every log of `history`, read through the pk's text.
  private func allOps(of key: OpHistory.DocumentKey, in history: OpHistory) throws -> [Op] {
    if found?.key != key { found = (key, [:]) }
    return try history.ops(of: key, found: &found!.ops, tableName: merge.config.currentTableName)
  }

  /// The merged document at `path` (nil when it ends removed), from the
  /// base, ours and theirs blob ids.
  func resolve(
    _ key: OpHistory.DocumentKey, path: String, table: TableConfig, ids: (GitOID?, GitOID?, GitOID?)
  ) throws -> JSONObject? {
    let resolver = DocumentResolver(table: table)
    let ourDocument = try merge.document(ids.1, path: path)
    let theirDocument = try merge.document(ids.2, path: path)
    let earliest = ((ourOps[key] ?? []) + (theirOps[key] ?? [])).map(\.hlc).min()
    if let earliest, !followTheBase(from: earliest),
      let latestInBase = try allOps(of: key, in: baseHistory).map(\.hlc).max(),
      earliest < latestInBase, let rewound = try rewind(key, path: path)
    {
      let known = rewound.ops
      return record(
        key,
        resolver.resolveRecording(
          pk: key.pk, base: rewound.document,
          ours: .init(
            document: ourDocument,
            ops: try allOps(of: key, in: ourHistory).filter { !known.contains($0.hlc) },
            syntheticStamp: ours.stamp),
          theirs: .init(
            document: theirDocument,
            ops: try allOps(of: key, in: theirHistory).filter { !known.contains($0.hlc) },
            syntheticStamp: theirs.stamp)))
    }
    return record(
      key,
      Self.replay(
        key, table: table, base: try merge.document(ids.0, path: path), ours: ourDocument,
        theirs: theirDocument, ops: (ourOps, theirOps), stamps: (ours.stamp, theirs.stamp)))
  }

  /// One document replayed from its base with both sides' new ops: the
  /// whole resolution when no document needs rewinding. It reads only its
  /// arguments, so the threads of ``resolveAll(_:)`` call it as well.
  static func replay(
    _ key: OpHistory.DocumentKey, table: TableConfig, base: JSONObject?, ours: JSONObject?,
    theirs: JSONObject?, ops: (ours: [OpHistory.DocumentKey: [Op]], theirs: [OpHistory.DocumentKey: [Op]]),
    stamps: (ours: HLC, theirs: HLC)
  ) -> Resolution {
    DocumentResolver(table: table).resolveRecording(
      pk: key.pk, base: base,
      ours: .init(document: ours, ops: ops.ours[key] ?? [], syntheticStamp: stamps.ours),
      theirs: .init(document: theirs, ops: ops.theirs[key] ?? [], syntheticStamp: stamps.theirs))
  }

  /// One document to resolve: its address and its base, ours and theirs
  /// blob ids.
  struct Job {
    var key: OpHistory.DocumentKey
    var path: String
    var table: TableConfig
    var ids: (GitOID?, GitOID?, GitOID?)
  }

  /// From how many documents ``resolveAll(_:)`` replays on two threads.
  static let parallelFrom = 256

  /// ``resolve(_:path:table:ids:)`` for each job, in order: each outcome
  /// is the merged document or what resolving it threw. The conflicts are
  /// recorded in the jobs' order either way.
  ///
  /// When no document needs rewinding (``newOpsFollowTheBase``), a large
  /// set is replayed on two threads: the blobs are read here first
  /// (libgit2's handles stay on this thread), and each thread parses and
  /// replays its half, which reads only what this context already holds.
  func resolveAll(_ jobs: [Job]) -> [Result<JSONObject?, any Error>] {
    guard jobs.count >= Self.parallelFrom, newOpsFollowTheBase else {
      return jobs.map { job in
        Result { try resolve(job.key, path: job.path, table: job.table, ids: job.ids) }
      }
    }
    let repository = merge.repository
    func read(_ id: GitOID?) -> Result<[UInt8]?, any Error> {
      Result { try id.map { try repository.blob($0) } }
    }
    let inputs = ReplayInputs(
      jobs: jobs, blobs: jobs.map { (read($0.ids.0), read($0.ids.1), read($0.ids.2)) },
      ops: (ourOps, theirOps),
      stamps: (ours.stamp, theirs.stamp))
    let halves = Mutex<[Int: [Result<Resolution, any Error>]]>([:])
    DispatchQueue.concurrentPerform(iterations: 2) { half in
      let range = half == 0 ? 0..<(jobs.count / 2) : (jobs.count / 2)..<jobs.count
      let results = range.map { i in Result { try inputs.replay(i) } }
      halves.withLock { $0[half] = results }
    }
    let resolutions = halves.withLock { ($0[0] ?? []) + ($0[1] ?? []) }
    return zip(jobs, resolutions).map { job, resolution in resolution.map { record(job.key, $0) } }
  }

  /// A replay's document and the assignments it overwrote.
  typealias Resolution = (document: JSONObject?, overwrites: [DocumentResolver.Overwrite])

  /// What the threads of ``resolveAll(_:)`` read. `@unchecked Sendable`:
  /// they only read it.
  private struct ReplayInputs: @unchecked Sendable {
    let jobs: [Job]
    let blobs: [(Result<[UInt8]?, any Error>, Result<[UInt8]?, any Error>, Result<[UInt8]?, any Error>)]
    let ops: (ours: [OpHistory.DocumentKey: [Op]], theirs: [OpHistory.DocumentKey: [Op]])
    let stamps: (ours: HLC, theirs: HLC)

    /// Job `i`, parsed (in the order ``MergeContext/resolve(_:path:table:ids:)``
    /// parses it) and replayed.
    func replay(_ i: Int) throws -> Resolution {
      let job = jobs[i]
      let (base, ours, theirs) = blobs[i]
      let ourDocument = try TreeMerge.document(bytes: try ours.get(), path: job.path)
      let theirDocument = try TreeMerge.document(bytes: try theirs.get(), path: job.path)
      return MergeContext.replay(
        job.key, table: job.table, base: try TreeMerge.document(bytes: try base.get(), path: job.path),
        ours: ourDocument, theirs: theirDocument, ops: ops, stamps: stamps)
    }
  }

  /// Keeps a resolution's overwrites as conflicts; returns its document.
  private func record(
    _ key: OpHistory.DocumentKey,
    _ resolution: (document: JSONObject?, overwrites: [DocumentResolver.Overwrite])
  ) -> JSONObject? {
    for o in resolution.overwrites {
      conflicts.append(
        Conflict(
          table: key.table, pk: key.pk, path: o.path, winningStamp: o.winner, winningValue: o.winningValue,
          losingStamp: o.loser, losingValue: o.losingValue))
    }
    return resolution.document
  }

  /// The newest ancestor of the base whose ops for the document all come
  /// before every other op either side has for it: its document and ops.
  /// Nil document and no ops when no ancestor qualifies (replay from the
  /// start).
  private func rewind(_ key: OpHistory.DocumentKey, path: String) throws -> (
    document: JSONObject?, ops: Set<HLC>
  )? {
    guard let baseCommit else { return nil }
    var all = Set<HLC>()
    for op in try allOps(of: key, in: ourHistory) + allOps(of: key, in: theirHistory) { all.insert(op.hlc) }
    let repository = merge.repository
    var walk: OpaquePointer?
    try LibGit2.check(git_revwalk_new(&walk, repository.handle), "git_revwalk_new")
    defer { git_revwalk_free(walk) }
    try LibGit2.check(
      git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL.rawValue | GIT_SORT_TIME.rawValue), "git_revwalk_sorting"
    )
    var start = baseCommit.raw
    try LibGit2.check(git_revwalk_push(walk, &start), "git_revwalk_push")
    var oid = git_oid()
    while git_revwalk_next(&oid, walk) == 0 {
      let tree = try repository.commit(GitOID(oid)).tree()
      // Each log blob is searched once for the whole walk, however many
      // commits hold it unchanged.
      let ops = Set(try allOps(of: key, in: OpHistory(tree: tree, repository: repository)).map(\.hlc))
      let rest = all.subtracting(ops)
      if let latest = ops.max(), let earliest = rest.min(), !(latest < earliest) { continue }
      return (try merge.document(tree.blobID(at: path), path: path), ops)
    }
    return (nil, [])
  }
}
