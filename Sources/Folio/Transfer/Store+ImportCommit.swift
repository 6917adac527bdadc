extension Store {
  /// Commits a landed import: the imported documents and this replica's op
  /// log, as one commit whose blobs go into one pack (streamed through
  /// ``GitPackWriter``), with git's index updated in one ordered pass and
  /// carrying each file's stat data, so `git status` is clean at once.
  /// Call with the lock held, after anything else pending was committed.
  /// - Parameter names: the imported file names, sorted by bytes.
  /// - Returns: the commit, or nil if the tree did not change.
  func commitImport(table: TableConfig, names: [String], message: String) throws -> GitOID? {
    let repository = try openRepository()
    let head = try repository.headCommit()
    let tableDirectory = directory(of: table)
    let logPath = Store.opsFolder + "/" + replicaID + ".ndjson"
    let pack = try GitPackWriter(repository: repository, count: names.count + 1)
    var ids: [GitOID] = []
    ids.reserveCapacity(names.count)
    for name in names {
      guard let bytes = try FileSystem.read(tableDirectory + "/" + name) else {
        throw FolioError(
          .io, "an imported document vanished before the commit", path: table.path + "/" + name)
      }
      ids.append(try pack.addBlob(bytes))
    }
    let logID = try pack.addBlob(try FileSystem.read(opLogPath) ?? [])
    try pack.finish()

    let index = try repository.index()
    let prefix = table.path + "/"
    // The op log sorts either before or after the table's files; slot it
    // into the ordered stream where it belongs.
    let logFirst = logPath.utf8.lexicographicallyPrecedes(prefix.utf8)
    let total = names.count + 1
    try index.bulkUpdate(count: total) { i in
      if logFirst ? i == 0 : i == names.count {
        return (logPath, logID, opLogPath)
      }
      let k = logFirst ? i - 1 : i
      return (prefix + names[k], ids[k], tableDirectory + "/" + names[k])
    }
    let tree = try index.writeTree(to: repository)
    try index.write()
    if let headTree = try head?.tree(), headTree.id == tree { return nil }
    let commit = try repository.createCommit(
      tree: tree, parents: head.map { [$0.id] } ?? [], message: message)
    try repository.setReference(try repository.headBranch(), to: commit, message: "folio import")
    return commit
  }
}
