internal import Clibgit2
import Glibc

extension GitRepository {
  /// A new root tree: `base` (nil for none) with each path set to an
  /// object and mode (0 for a plain file, `0o040000` for a folder's tree),
  /// or removed where the id is nil, creating folders on the way. Only the
  /// trees along the paths are read and rewritten.
  ///
  /// A folder with many changes (a merge's thousands of documents in one
  /// table), or a large one (``largeFolderEntries``), is rewritten here in
  /// one pass over its entries, and handed to libgit2 as the folder's new
  /// tree: libgit2's tree builder would put every entry of a 100k-document
  /// folder into a map first. Either way
  /// the tree is the one libgit2 writes, byte for byte (see
  /// ``rewrittenFolders(_:setting:)``).
  package func updatedTree(_ base: GitTree?, setting changes: [(path: String, id: GitOID?, mode: UInt32)])
    throws
    -> GitOID
  {
    let (folders, rest) = try rewrittenFolders(base, setting: changes)
    return try libgit2UpdatedTree(base, setting: folders + rest)
  }

  /// The fewest changes in one folder for it to be rewritten in one pass.
  static let folderRewriteThreshold = 64

  /// A folder this large is rewritten in one pass whatever the number of
  /// changes: libgit2's tree builder would put each of its entries in a map
  /// to change ten of them (a commit of ten documents in a table of
  /// 300,000, where the pass is a copy around the changes).
  static let largeFolderEntries = 1024

  /// Splits `changes` into new trees for the folders rewritten in one pass
  /// (as upserts of the folder, mode `0o040000`) and the changes left to
  /// libgit2. A folder qualifies when it has at least
  /// ``folderRewriteThreshold`` changes or ``largeFolderEntries`` entries,
  /// exists in `base`, and every change
  /// in it sets or removes a file, symlink or executable (no folder or
  /// gitlink, none replacing a folder, no removal of what is not there),
  /// leaving it not empty: the cases where libgit2's tree builder just
  /// inserts or removes entries.
  func rewrittenFolders(_ base: GitTree?, setting changes: [(path: String, id: GitOID?, mode: UInt32)])
    throws -> (
      folders: [(path: String, id: GitOID?, mode: UInt32)], rest: [(path: String, id: GitOID?, mode: UInt32)]
    )
  {
    guard let base else { return ([], changes) }
    var byFolder: [String: [(name: String, id: GitOID?, mode: UInt32)]] = [:]
    for change in changes {
      guard let slash = change.path.utf8.lastIndex(of: UInt8(ascii: "/")) else { continue }
      let folder = String(change.path[..<slash])
      let name = String(change.path[change.path.index(after: slash)...])
      byFolder[folder, default: []].append((name, change.id, change.mode == 0 ? 0o100644 : change.mode))
    }
    var folders: [(path: String, id: GitOID?, mode: UInt32)] = []
    var rewritten = Set<String>()
    for (path, entries) in byFolder {
      // A change deeper inside would make libgit2 open the folder again.
      let inside = path + "/"
      guard !byFolder.keys.contains(where: { $0.hasPrefix(inside) }),
        let folder = try base.subtree(at: path, repository: self),
        entries.count >= Self.folderRewriteThreshold
          || git_tree_entrycount(folder.handle) >= Self.largeFolderEntries,
        let bytes = GitTree.rewrittenBytes(folder, setting: entries)
      else { continue }
      folders.append((path, try writeTree(raw: bytes), 0o040000))
      rewritten.insert(path)
    }
    if rewritten.isEmpty { return ([], changes) }
    let rest = changes.filter { change in
      guard let slash = change.path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return true }
      return !rewritten.contains(String(change.path[..<slash]))
    }
    return (folders, rest)
  }

  /// A tree object from its raw entries, written as any object is (into
  /// the pack being collected, inside ``withPackedWrites(workTree:storingSmallBlobs:_:)``).
  func writeTree(raw bytes: [UInt8]) throws -> GitOID {
    var odb: OpaquePointer?
    try LibGit2.check(git_repository_odb(&odb, handle), "git_repository_odb")
    defer { git_odb_free(odb) }
    var oid = git_oid()
    try bytes.withUnsafeBytes { raw in
      try LibGit2.check(
        git_odb_write(&oid, odb, raw.baseAddress, raw.count, GIT_OBJECT_TREE), "git_odb_write")
    }
    return GitOID(oid)
  }

  /// ``updatedTree(_:setting:)`` by libgit2 alone.
  func libgit2UpdatedTree(_ base: GitTree?, setting changes: [(path: String, id: GitOID?, mode: UInt32)])
    throws -> GitOID
  {
    let baseline = try base ?? emptyTree()
    // The path strings must outlive the call.
    let paths = changes.map { strdup($0.path) }
    defer { for path in paths { free(path) } }
    var updates = zip(changes, paths).map { change, path in
      var update = git_tree_update()
      update.action = change.id == nil ? GIT_TREE_UPDATE_REMOVE : GIT_TREE_UPDATE_UPSERT
      if let id = change.id { update.id = id.raw }
      update.filemode = change.mode == 0 ? GIT_FILEMODE_BLOB : git_filemode_t(rawValue: change.mode)
      update.path = UnsafePointer(path)
      return update
    }
    var out = git_oid()
    try LibGit2.check(
      git_tree_create_updated(&out, handle, baseline.handle, updates.count, &updates),
      "git_tree_create_updated")
    return GitOID(out)
  }

  /// The empty tree, written if it is not there yet.
  private func emptyTree() throws -> GitTree {
    var builder: OpaquePointer?
    try LibGit2.check(git_treebuilder_new(&builder, handle, nil), "git_treebuilder_new")
    defer { git_treebuilder_free(builder) }
    var id = git_oid()
    try LibGit2.check(git_treebuilder_write(&id, builder), "git_treebuilder_write")
    return try tree(GitOID(id))
  }
}
