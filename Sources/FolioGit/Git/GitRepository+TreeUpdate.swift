internal import Clibgit2
import Glibc

extension GitRepository {
  /// A new root tree: `base` (nil for none) with each path set to an
  /// object and mode (0 for a plain file, `0o040000` for a folder's tree),
  /// or removed where the id is nil, creating folders on the way. Only the
  /// trees along the paths are read and rewritten.
  package func updatedTree(_ base: GitTree?, setting changes: [(path: String, id: GitOID?, mode: UInt32)])
    throws
    -> GitOID
  {
    let baseline = try base ?? emptyTree()
    // The path strings must outlive the call.
    let paths = changes.map { strdup($0.path) }
    defer { paths.forEach { free($0) } }
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
