internal import Clibgit2
import FolioCore
import FolioGit
import FolioSystem
import Glibc

extension Importer {
  /// The tree of the table's folder after an import: HEAD's (`head`) with
  /// each imported file set, `names[k]` (`xx/y/name` in a nested table)
  /// to the blob `ids[k * 20..<k * 20 + 20]`, written to `pack`. `order`
  /// sorts the names, which groups them by folder at every level.
  static func importedFolderTree(
    table: TableConfig, names: [String], order: [Int], ids: [UInt8], head: GitTree?, pack: GitPackFile,
    repository: GitRepository
  ) throws -> GitOID {
    try ids.withUnsafeBytes { ids in
      // The folder at `level` holding the names `order[range]`, whose
      // first `offset` characters are its path.
      func tree(_ head: GitTree?, _ range: Range<Int>, offset: Int, level: Int) throws -> GitOID {
        guard level < table.layout.depth else {
          return try pack.addTree(
            GitTree.mergedBytes(head, adding: range.count) {
              let k = order[range.lowerBound + $0]
              return (
                String(names[k].dropFirst(offset)),
                UnsafeRawBufferPointer(rebasing: ids[(k * 20)..<(k * 20 + 20)])
              )
            })
        }
        let width = table.layout.folderWidths[level]
        var subfolders: [(name: String, id: GitOID)] = []
        var start = range.lowerBound
        while start < range.upperBound {
          let path = String(names[order[start]].prefix(offset + width + 1))
          let name = String(path.dropFirst(offset).dropLast())
          var end = start
          while end < range.upperBound && names[order[end]].hasPrefix(path) { end += 1 }
          let inner = try tree(
            try head?.subtree(at: name, repository: repository), start..<end, offset: offset + width + 1,
            level: level + 1)
          subfolders.append((name, inner))
          start = end
        }
        return try pack.addTree(GitTree.mergedBytes(head, subfolders: subfolders))
      }
      return try tree(head, 0..<order.count, offset: 0, level: 0)
    }
  }

  /// Adds to `pack` the final bytes of each document the import staged
  /// more than once (a later row for the same pk) whose first bytes, the
  /// ones packed while staging, are not the final ones, as its file in the
  /// table's folder `directory` holds them.
  /// - Throws: `IO` when a file no longer holds what the import wrote.
  static func packRestaged(
    _ manifest: ImportManifest, table: TableConfig, directory: String, into pack: GitPackFile
  )
    throws
  {
    for (k, packed) in manifest.restaged.sorted(by: { $0.key < $1.key }) {
      let final = GitOID(bytes: Array(manifest.ids[(k * 20)..<(k * 20 + 20)]))
      guard final != packed else { continue }
      guard let bytes = try FileSystem.read(directory + "/" + manifest.names[k]),
        try pack.addBlob(bytes) == final
      else {
        throw FolioError(
          .io, "an imported document changed before the commit", path: table.path + "/" + manifest.names[k])
      }
    }
  }

  /// Commits a landed import: the imported documents and this replica's op
  /// log, as one commit. The documents' blobs are already in the import's
  /// pack (``ImportManifest``), which is being finished on another thread;
  /// the op log and the table's folder tree go into a second pack, and the
  /// few trees above the folder and the commit into a small third one, so
  /// nothing is written loose. The
  /// root tree is HEAD's with two entries replaced, and git's index file
  /// is written merged in one ordered pass, carrying each file's stat data,
  /// so `git status` is clean at once. Nothing here holds more than one
  /// entry per document (a name and a 20-byte id).
  /// Call with the lock held, after anything else pending was committed.
  /// - Returns: the commit, or nil if the tree did not change.
  func commitImport(table: TableConfig, manifest: ImportManifest, pack: GitPackFile, message: String) throws
    -> GitOID?
  {
    let repository = try store.openRepository()
    let head = try repository.headCommit()
    let headTree = try head?.tree()
    let tableDirectory = store.directory(of: table)
    let logPath = Store.opsFolder + "/" + store.opLogName
    let names = manifest.names
    // File names are ASCII (PrimaryKey percent-encodes the rest), so
    // String order is byte order, which is git's.
    let order = names.indices.sorted { names[$0] < names[$1] }

    // The documents' pack is being finished on another thread meanwhile
    // (``GitPackFile/finishInBackground(packFolder:)``); what only the
    // landing or the commit can tell (the op log, documents restaged with
    // new bytes, the folder tree) goes into a pack of its own.
    let folder = repository.gitDirectory + "/objects/pack"
    try FileSystem.makeDirectories(folder)
    let rest = try GitPackFile(path: folder + "/tmp_folio_import_\(getpid()).pack")
    let logID: GitOID
    let folderTree: GitOID
    do {
      try Self.packRestaged(manifest, table: table, directory: tableDirectory, into: rest)
      logID = try rest.addBlob(file: store.opLogPath)
      let headFolder = try headTree?.subtree(at: table.path, repository: repository)
      folderTree = try Self.importedFolderTree(
        table: table, names: names, order: order, ids: manifest.ids, head: headFolder, pack: rest,
        repository: repository)
      try rest.store(in: repository)
      try pack.store(in: repository)
    } catch {
      rest.discard()
      throw error
    }
    // The trees from the table's folder and the op log up to the root, and
    // the commit, go into a second, small pack: libgit2 would write them
    // loose, and an import leaves no loose object at all.
    let commit: GitOID? = try GitRepository.withPackedWrites(workTree: store.rootPath) { packed in
      let tree = try packed.updatedTree(
        try headTree.map { try packed.tree($0.id) },
        setting: [(table.path, folderTree, GIT_FILEMODE_TREE.rawValue), (logPath, logID, 0)])
      if let headTree, headTree.id == tree { return nil }
      return try packed.createCommit(tree: tree, parents: head.map { [$0.id] } ?? [], message: message)
    }

    let prefix = table.path + "/"
    // The op log sorts either before or after the table's files; slot it
    // into the ordered stream where it belongs.
    let logFirst = logPath.utf8.lexicographicallyPrecedes(prefix.utf8)
    let logBytes = logID.bytes
    // Each file's stat data is read by name in the open table folder.
    let tableFolder = try FileSystem.syscall("open", path: tableDirectory) {
      open(tableDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }
    defer { close(tableFolder) }
    try logBytes.withUnsafeBytes { logRaw in
      try manifest.ids.withUnsafeBytes { ids in
        try repository.index().writeMerged(to: repository.gitDirectory + "/index", count: names.count + 1) {
          i in
          if logFirst ? i == 0 : i == names.count {
            return (logPath, logRaw, AT_FDCWD, store.opLogPath)
          }
          let k = order[logFirst ? i - 1 : i]
          return (
            prefix + names[k], UnsafeRawBufferPointer(rebasing: ids[(k * 20)..<(k * 20 + 20)]), tableFolder,
            names[k]
          )
        }
      }
    }
    guard let commit else { return nil }
    try repository.setReference(try repository.headBranch(), to: commit, message: "folio import")
    // The import's log lines are committed: the next op starts a new
    // segment, so no later commit writes them again.
    store.opLogSegments.sealIfFull()
    return commit
  }
}
