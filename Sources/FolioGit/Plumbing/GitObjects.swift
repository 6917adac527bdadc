internal import Clibgit2
import FolioCore

/// An owned `git_tree*`, freed on deinit.
package final class GitTree {
  let handle: OpaquePointer
  package let id: GitOID

  init(handle: OpaquePointer) {
    self.handle = handle
    self.id = GitOID(git_tree_id(handle).pointee)
  }

  deinit { git_tree_free(handle) }

  /// The blob id at `path`, or nil if there is no blob there.
  package func blobID(at path: String) -> GitOID? {
    var entry: OpaquePointer?
    guard git_tree_entry_bypath(&entry, handle, path) == 0, let entry else { return nil }
    defer { git_tree_entry_free(entry) }
    guard git_tree_entry_type(entry) == GIT_OBJECT_BLOB else { return nil }
    return GitOID(git_tree_entry_id(entry).pointee)
  }

  /// The id and git mode of the entry at `path` (a blob, symlink, gitlink
  /// or tree), or nil if there is none.
  func entry(at path: String) -> (id: GitOID, mode: UInt32)? {
    var entry: OpaquePointer?
    guard git_tree_entry_bypath(&entry, handle, path) == 0, let entry else { return nil }
    defer { git_tree_entry_free(entry) }
    return (GitOID(git_tree_entry_id(entry).pointee), UInt32(git_tree_entry_filemode_raw(entry).rawValue))
  }

  /// The id of the entry `name` directly inside this folder, and whether
  /// it is a folder; nil when there is none. A binary search: the folder's
  /// entries are not copied out.
  func entry(named name: String) -> (id: GitOID, isTree: Bool)? {
    guard let entry = git_tree_entry_byname(handle, name) else { return nil }
    return (GitOID(git_tree_entry_id(entry).pointee), git_tree_entry_type(entry) == GIT_OBJECT_TREE)
  }

  /// The names and ids of the folders directly inside this one.
  func subtrees() -> [(name: String, id: GitOID)] {
    (0..<git_tree_entrycount(handle)).compactMap { index in
      guard let entry = git_tree_entry_byindex(handle, index), git_tree_entry_type(entry) == GIT_OBJECT_TREE
      else { return nil }
      return (String(cString: git_tree_entry_name(entry)), GitOID(git_tree_entry_id(entry).pointee))
    }
  }

  /// The blobs of `table`'s folder, named as inside it: its files, and in
  /// a hashed or nested table those of its folders as `xx/name` or
  /// `xx/y/name`.
  package func documentBlobs(of table: TableConfig, repository: GitRepository) throws -> [(
    name: String, id: GitOID
  )] {
    try documentBlobs(in: table.path, layout: table.layout, repository: repository)
  }

  /// The blobs of the table folder at `path` ("" for this tree) laid out
  /// as `layout`, named as inside it (see ``documentBlobs(of:repository:)``).
  package func documentBlobs(in path: String, layout: TableLayout, repository: GitRepository) throws -> [(
    name: String, id: GitOID
  )] {
    guard layout != .flat else { return try blobs(in: path, repository: repository) }
    guard let folder = path.isEmpty ? self : try subtree(at: path, repository: repository) else { return [] }
    var result: [(name: String, id: GitOID)] = []
    func collect(_ folder: GitTree, prefix: String, level: Int) throws {
      for index in 0..<git_tree_entrycount(folder.handle) {
        guard let entry = git_tree_entry_byindex(folder.handle, index),
          git_tree_entry_type(entry) == GIT_OBJECT_TREE
        else { continue }
        let name = String(cString: git_tree_entry_name(entry))
        guard layout.isFolder(name, level: level) else { continue }
        let inner = try repository.tree(GitOID(git_tree_entry_id(entry).pointee))
        if level + 1 < layout.depth {
          try collect(inner, prefix: prefix + name + "/", level: level + 1)
        } else {
          for (file, id) in try inner.blobs(in: "", repository: repository) {
            result.append((prefix + name + "/" + file, id))
          }
        }
      }
    }
    try collect(folder, prefix: "", level: 0)
    return result
  }

  /// The names and ids of the blobs directly inside the folder `path` ("" for
  /// the root).
  package func blobs(in path: String, repository: GitRepository) throws -> [(name: String, id: GitOID)] {
    let folder: GitTree
    if path.isEmpty {
      folder = self
    } else {
      var entry: OpaquePointer?
      guard git_tree_entry_bypath(&entry, handle, path) == 0, let entry else { return [] }
      defer { git_tree_entry_free(entry) }
      guard git_tree_entry_type(entry) == GIT_OBJECT_TREE else { return [] }
      folder = try repository.tree(GitOID(git_tree_entry_id(entry).pointee))
    }
    var result: [(String, GitOID)] = []
    let count = git_tree_entrycount(folder.handle)
    for index in 0..<count {
      guard let entry = git_tree_entry_byindex(folder.handle, index),
        git_tree_entry_type(entry) == GIT_OBJECT_BLOB
      else { continue }
      result.append((String(cString: git_tree_entry_name(entry)), GitOID(git_tree_entry_id(entry).pointee)))
    }
    return result
  }
}

/// An owned `git_commit*`, freed on deinit.
package final class GitCommit {
  let handle: OpaquePointer
  package let id: GitOID

  init(handle: OpaquePointer) {
    self.handle = handle
    self.id = GitOID(git_commit_id(handle).pointee)
  }

  deinit { git_commit_free(handle) }

  /// The commit time, in milliseconds since the epoch.
  var timeMilliseconds: UInt64 { UInt64(max(0, git_commit_time(handle))) * 1000 }

  /// The full message.
  var message: String { git_commit_message(handle).map { String(cString: $0) } ?? "" }

  /// The id of the commit's root tree, without reading the tree.
  var treeID: GitOID { GitOID(git_commit_tree_id(handle).pointee) }

  /// The ids of the parents.
  var parentIDs: [GitOID] {
    (0..<git_commit_parentcount(handle)).map { GitOID(git_commit_parent_id(handle, $0).pointee) }
  }

  package func tree() throws -> GitTree {
    var tree: OpaquePointer?
    try LibGit2.check(git_commit_tree(&tree, handle), "git_commit_tree")
    return GitTree(handle: tree!)
  }
}
