internal import Clibgit2
import Glibc

extension GitTree {
  /// The folder tree at `path`, or nil if there is none.
  package func subtree(at path: String, repository: GitRepository) throws -> GitTree? {
    var entry: OpaquePointer?
    guard git_tree_entry_bypath(&entry, handle, path) == 0, let entry else { return nil }
    defer { git_tree_entry_free(entry) }
    guard git_tree_entry_type(entry) == GIT_OBJECT_TREE else { return nil }
    return try repository.tree(GitOID(git_tree_entry_id(entry).pointee))
  }

  /// The raw content of a folder's tree object: `folder`'s entries (nil for
  /// a new folder) with `count` blobs added or replaced, given by name in
  /// byte order by `entry(i)`.
  ///
  /// Written straight into one buffer, merging in order: libgit2's tree
  /// builder would hold a map entry and a copied name for each of 300k
  /// files. Git orders a tree by name, comparing a folder's name as if it
  /// ended in "/".
  package static func mergedBytes(
    _ folder: GitTree?, adding count: Int, _ entry: (Int) -> (name: String, id: UnsafeRawBufferPointer)
  ) -> [UInt8] {
    let existing = folder.map { git_tree_entrycount($0.handle) } ?? 0
    var bytes: [UInt8] = []
    bytes.reserveCapacity((existing + count) * 40)
    func append(mode: UInt32, name: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer) {
      bytes += String(mode, radix: 8).utf8
      bytes.append(UInt8(ascii: " "))
      bytes += name
      bytes.append(0)
      bytes += id
    }
    func appendNew(_ new: (name: String, id: UnsafeRawBufferPointer)) {
      var name = new.name
      name.withUTF8 { append(mode: 0o100644, name: UnsafeRawBufferPointer($0), id: new.id) }
    }
    var i = 0
    var j = 0
    while i < existing || j < count {
      guard i < existing, let old = git_tree_entry_byindex(folder!.handle, i) else {
        appendNew(entry(j))
        j += 1
        continue
      }
      let oldName = UnsafeRawBufferPointer(
        start: git_tree_entry_name(old), count: strlen(git_tree_entry_name(old)))
      if j < count {
        let new = entry(j)
        var newName = new.name
        let order = newName.withUTF8 {
          compare(oldName, isFolder: git_tree_entry_type(old) == GIT_OBJECT_TREE, UnsafeRawBufferPointer($0))
        }
        if order >= 0 {
          appendNew(new)
          j += 1
          if order == 0 { i += 1 }  // replaced
          continue
        }
      }
      withUnsafeBytes(of: git_tree_entry_id(old).pointee.id) { id in
        append(
          mode: git_tree_entry_filemode(old).rawValue, name: oldName,
          id: UnsafeRawBufferPointer(rebasing: id[0..<20]))
      }
      i += 1
    }
    return bytes
  }

  /// -1, 0 or 1 as the existing entry `old` sorts before, at or after the
  /// new blob named `new`, in git's tree order.
  private static func compare(_ old: UnsafeRawBufferPointer, isFolder: Bool, _ new: UnsafeRawBufferPointer)
    -> Int
  {
    let n = min(old.count, new.count)
    for k in 0..<n where old[k] != new[k] { return old[k] < new[k] ? -1 : 1 }
    // One name is a prefix of the other. A folder's name goes on with a
    // "/", a blob's just ends (-1).
    let x = old.count > n ? Int(old[n]) : (isFolder ? Int(UInt8(ascii: "/")) : -1)
    let y = new.count > n ? Int(new[n]) : -1
    if x == y { return x == -1 ? 0 : -1 }  // a "/" inside a new name cannot occur
    return x < y ? -1 : 1
  }
}
