import FolioCore
import FolioJSON
import FolioSystem

/// What `folio compact` did.
public struct CompactionSummary: Sendable {
  /// The commit every known ref has merged; ops it holds were dropped.
  public var mergedEverywhere: String?
  /// Op log lines dropped.
  public var droppedOps: Int
  /// Op log lines kept.
  public var keptOps: Int
  /// The commit that records the smaller logs, if anything was dropped.
  public var commit: String?
}

extension Store {
  /// Drops op log lines that every known ref has already merged, and
  /// commits the smaller logs.
  ///
  /// "Known refs" are the current branch, every other local branch
  /// (`refs/heads/*`: a branch not merged yet still needs its ops) and every
  /// remote-tracking branch (fetch first to include the latest). Ops in their common ancestor are
  /// no longer needed by merges between them: a later merge against an
  /// older base (a replica that was offline) still resolves correctly,
  /// because a change no op explains gets a synthetic op from its diff.
  @discardableResult
  public func compact(message: String? = nil) throws -> CompactionSummary {
    try lock.withLock {
      try recoverBeforeWrite()
      _ = try commitLocked(message: nil)
      let repository = try openRepository()
      var summary = CompactionSummary(mergedEverywhere: nil, droppedOps: 0, keptOps: 0, commit: nil)
      guard let head = try repository.headCommit()?.id else { return summary }
      var common: GitOID? = head
      let references =
        try repository.references(prefix: "refs/heads/") + repository.references(prefix: "refs/remotes/")
      for reference in references where !reference.hasSuffix("/HEAD") {
        guard let id = try repository.referenceID(reference), let current = common else { continue }
        common = try repository.mergeBases(current, id).first
      }
      guard let common else { return summary }
      summary.mergedEverywhere = common.description
      let merged = try OpHistory(tree: try repository.commit(common).tree(), repository: repository)
      var known = Set<HLC>()
      for (name, bytes) in try merged.files {
        for op in try OpHistory.parse(bytes[...], file: Store.opsFolder + "/" + name) { known.insert(op.hlc) }
      }
      // Local stamps must stay ahead of the ops that leave the log.
      if let latest = try lastCommittedStamp() { try observe(remoteStamp: latest) }
      let directory = rootPath + "/" + Store.opsFolder
      for name in (try FileSystem.list(directory) ?? []).sorted() where name.hasSuffix(".ndjson") {
        let path = directory + "/" + name
        let bytes = try FileSystem.read(path) ?? []
        var kept: [UInt8] = []
        var dropped = 0
        for line in OpLogMerge.lines(bytes) {
          if let op = try? Op(json: JSONValue(parsing: line)), known.contains(op.hlc) {
            dropped += 1
          } else {
            kept += line
            kept.append(UInt8(ascii: "\n"))
            summary.keptOps += 1
          }
        }
        if dropped > 0 {
          try FileSystem.writeAtomically(path, kept, sync: true, under: rootPath)
          summary.droppedOps += dropped
        }
      }
      resetClockCache()
      if summary.droppedOps > 0 {
        summary.commit = try commitLocked(
          message: message ?? "folio: compact op logs (\(summary.droppedOps) ops merged everywhere)"
        ).commit
      }
      return summary
    }
  }

  /// The newest stamp in this replica's own log.
  private func lastCommittedStamp() throws -> HLC? {
    try OpLog.lastOp(in: opLogPath)?.hlc
  }
}
