import Foundation

extension Store {
  /// The `merge.folio.driver` command line git runs for table documents and
  /// op logs, given the program to call.
  static func mergeDriverCommand(program: String) -> String {
    let quoted = program.contains(" ") ? "\"\(program)\"" : program
    return "\(quoted) merge-driver %O %A %B %P"
  }

  /// Registers Folio's merge driver in `.git/config`, so `git merge` and
  /// `git pull` resolve table documents by replay.
  /// - Parameter program: the `folio` executable (default: `folio` on PATH).
  public func registerMergeDriver(program: String = "folio") throws {
    let repository = try openRepository()
    let command = Store.mergeDriverCommand(program: program)
    if repository.config("merge.folio.driver") != command {
      try repository.setConfig("merge.folio.name", "Folio: replay operations (counters add, sets union)")
      try repository.setConfig("merge.folio.driver", command)
    }
  }

  /// The git merge driver (`folio merge-driver %O %A %B %P`): merges the
  /// three versions of a table document or op log, writing the result over
  /// `ours`, as git expects.
  ///
  /// A document is resolved exactly as `folio sync` resolves it, from the op
  /// logs of HEAD and the commit being merged, when git says which that is
  /// (`MERGE_HEAD`, or the `GITHEAD_<id>` variables `git merge` sets). Without
  /// one, the three versions are diffed into synthetic ops through the column
  /// kinds.
  /// - Returns: whether the merge is clean. When it is not, `ours` is left
  ///   untouched, so no conflict markers ever land in a table file.
  public func runMergeDriver(basePath: String, oursPath: String, theirsPath: String, path: String) throws
    -> Bool
  {
    let read = { (file: String) throws -> [UInt8] in try FileSystem.read(file) ?? [] }
    if TreeMerge.opLogName(path) != nil {
      let merged = OpLogMerge.merge(
        base: try read(basePath), ours: try read(oursPath), theirs: try read(theirsPath))
      try FileSystem.writeAtomically(oursPath, merged, sync: false)
      return true
    }
    let repository = try openRepository()
    let merge = TreeMerge(repository: repository, config: config)
    guard let (table, pk) = merge.documentAddress(path) else { return false }
    let merged: JSONObject?
    if let ours = try repository.headCommit()?.id,
      let theirs = try mergeHead(repository: repository, ours: ours),
      let resolved = try merge.resolveDocument(path: path, ours: ours, theirs: theirs)
    {
      merged = resolved
    } else {
      func parse(_ file: String) throws -> JSONObject? {
        let bytes = try read(file)
        if bytes.isEmpty { return nil }
        guard case .object(let object) = try JSONValue(parsing: bytes, file: path) else {
          throw FolioError(.invalidDocument, "a document must be a JSON object", path: path)
        }
        return object
      }
      merged = DocumentResolver(table: table).resolve(
        pk: pk, base: try parse(basePath),
        ours: .init(
          document: try parse(oursPath), ops: [], syntheticStamp: HLC(wall: 1, counter: 0, replica: "~ours")),
        theirs: .init(
          document: try parse(theirsPath), ops: [],
          syntheticStamp: HLC(wall: 1, counter: 0, replica: "~theirs")))
    }
    guard let merged else { return false }
    try FileSystem.writeAtomically(oursPath, JSONValue.object(merged).canonicalBytes(), sync: false)
    return true
  }

  /// The commit being merged into HEAD, if git says.
  private func mergeHead(repository: GitRepository, ours: GitOID) throws -> GitOID? {
    if let bytes = try FileSystem.read(gitDirectory + "/MERGE_HEAD"),
      let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first,
      let id = GitOID(hex: String(line)), id != ours
    {
      return id
    }
    for (name, _) in ProcessInfo.processInfo.environment.sorted(by: { $0.key < $1.key })
    where name.hasPrefix("GITHEAD_") {
      if let id = GitOID(hex: String(name.dropFirst(8))), id != ours, (try? repository.commit(id)) != nil {
        return id
      }
    }
    return nil
  }
}
