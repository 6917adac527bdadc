internal import Clibgit2
import Glibc

extension GitRepository {
  /// A new root tree: `base` (nil for none) with each path set to an
  /// object, a folder's tree or a file's blob, creating folders on the way.
  /// Only the trees along the paths are read and rewritten; a replaced
  /// folder's old tree is never loaded.
  func updatedTree(_ base: GitTree?, _ updates: [(path: String, id: GitOID, isFolder: Bool)]) throws
    -> GitOID
  {
    let baseline = try base ?? emptyTree()
    var out = git_oid()
    let paths = updates.map { strdup($0.path) }
    defer { for path in paths { free(path) } }
    var list = updates.indices.map { i in
      git_tree_update(
        action: GIT_TREE_UPDATE_UPSERT, id: updates[i].id.raw,
        filemode: updates[i].isFolder ? GIT_FILEMODE_TREE : GIT_FILEMODE_BLOB, path: paths[i])
    }
    try LibGit2.check(
      git_tree_create_updated(&out, handle, baseline.handle, list.count, &list), "git_tree_create_updated")
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
