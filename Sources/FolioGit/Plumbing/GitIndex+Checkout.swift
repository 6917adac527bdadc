internal import Clibgit2
import FolioSystem
import Glibc

extension GitIndex {
  /// One change a checkout makes to the index.
  struct Edit {
    /// The path, as the index spells it.
    var path: String
    /// The stage-0 entry the path gets (its `path` is ignored), or nil
    /// when every stage of the path goes.
    var entry: git_index_entry?
  }

  /// Writes the index file as this index's entries with `edits` applied:
  /// each edit replaces every stage of its path, or removes them. `edits`
  /// are in path order, one per path.
  ///
  /// The file is streamed out as ``writeMerged(to:count:_:)`` writes it:
  /// adding thousands of new paths to libgit2's index moves its whole
  /// entry array once per path. When the entries written are exactly the
  /// files of `tree` (the commit checked out), the file also gets git's
  /// cached tree (the `TREE` extension) for `tree`, taken from its ids, so
  /// that the next commit does not hash a 100k-entry folder again; when
  /// they are not (a file staged by hand meanwhile), it goes without, and
  /// git or libgit2 rebuild it when they need it. Other extensions
  /// (resolve-undo, the untracked cache) are left out.
  ///
  /// The in-memory index is not updated: read it from disk again to use it.
  func writeApplying(_ edits: [Edit], matching tree: GitTree?, repository: GitRepository) throws {
    guard let indexPath = git_index_path(handle).map({ String(cString: $0) }) else {
      throw FolioError(.git, "the index has no file to write", function: "git_index_path")
    }
    let order = mergedOrder(count: edits.count, path: { edits[$0].path }, removes: { edits[$0].entry == nil })
    let extended = writesExtendedFlags(order) { edits[$0].entry!.flags_extended }
    var files = tree.map { TreeFiles(root: $0, repository: repository) }
    try Self.writeIndexFile(at: indexPath) { writer in
      writer.appendHeader(entries: order.count, extended: extended)
      for (old, new) in order {
        if new >= 0 {
          var entry = edits[new].entry!
          try edits[new].path.withCString { path in
            entry.path = path
            try writer.append(entry)
            if files != nil, try !files!.next(is: entry) { files = nil }
          }
        } else {
          let entry = git_index_get_byindex(handle, old)!.pointee
          try writer.append(entry)
          if files != nil, try !files!.next(is: entry) { files = nil }
        }
      }
      if let tree, var files, try files.isExhausted(),
        let cached = try Self.cachedTree(tree, repository: repository)
      {
        writer.append(Array("TREE".utf8))
        writer.append32(UInt32(cached.bytes.count))
        writer.append(cached.bytes)
      }
    }
  }

  /// Git's cached tree for `tree` (the `TREE` extension's content): for
  /// each folder, first the root, its name, how many index entries it
  /// covers, how many subfolders it has, and its id, then its subfolders
  /// the same way. Nil when a folder holds no file, which git never
  /// caches.
  static func cachedTree(_ tree: GitTree, name: [UInt8] = [], repository: GitRepository) throws
    -> (bytes: [UInt8], files: Int)?
  {
    var files = 0
    var folders = 0
    var below: [UInt8] = []
    for k in 0..<git_tree_entrycount(tree.handle) {
      guard let entry = git_tree_entry_byindex(tree.handle, k) else { return nil }
      guard git_tree_entry_type(entry) == GIT_OBJECT_TREE else {
        files += 1
        continue
      }
      let entryName = Array(
        UnsafeRawBufferPointer(start: git_tree_entry_name(entry), count: strlen(git_tree_entry_name(entry))))
      guard
        let folder = try cachedTree(
          try repository.tree(GitOID(git_tree_entry_id(entry).pointee)), name: entryName,
          repository: repository)
      else { return nil }
      files += folder.files
      folders += 1
      below += folder.bytes
    }
    guard files > 0 else { return nil }
    return (name + [0] + Array("\(files) \(folders)\n".utf8) + tree.id.bytes + below, files)
  }

  /// The files of a tree (everything but folders), walked in index order,
  /// checked one by one against the entries an index file gets.
  struct TreeFiles {
    let repository: GitRepository
    /// The folders being walked: each tree, the next entry in it, and its
    /// path with a trailing slash (empty for the root).
    private var stack: [(tree: GitTree, next: Int, prefix: [UInt8])]

    init(root: GitTree, repository: GitRepository) {
      self.repository = repository
      stack = [(root, 0, [])]
    }

    /// The next file, as a tree entry and the path of its folder.
    private mutating func nextFile() throws -> (entry: OpaquePointer, prefix: [UInt8])? {
      while let top = stack.last {
        guard top.next < git_tree_entrycount(top.tree.handle) else {
          stack.removeLast()
          continue
        }
        stack[stack.count - 1].next += 1
        guard let entry = git_tree_entry_byindex(top.tree.handle, top.next) else { return nil }
        if git_tree_entry_type(entry) == GIT_OBJECT_TREE {
          let name = UnsafeRawBufferPointer(
            start: git_tree_entry_name(entry), count: strlen(git_tree_entry_name(entry)))
          stack.append(
            (
              try repository.tree(GitOID(git_tree_entry_id(entry).pointee)), 0,
              top.prefix + name + [UInt8(ascii: "/")]
            ))
          continue
        }
        return (entry, top.prefix)
      }
      return nil
    }

    /// Whether `entry` (a stage-0 entry with the tree's path, mode and id)
    /// is the tree's next file.
    mutating func next(is entry: git_index_entry) throws -> Bool {
      guard entry.flags & UInt16(GIT_INDEX_ENTRY_STAGEMASK) == 0, let (file, prefix) = try nextFile() else {
        return false
      }
      guard entry.mode == UInt32(git_tree_entry_filemode_raw(file).rawValue) else { return false }
      var id = entry.id
      guard git_oid_equal(&id, git_tree_entry_id(file)) != 0 else { return false }
      let length = strlen(entry.path)
      guard length > prefix.count,
        prefix.isEmpty || prefix.withUnsafeBytes({ memcmp(entry.path, $0.baseAddress!, prefix.count) == 0 })
      else { return false }
      return strcmp(entry.path + prefix.count, git_tree_entry_name(file)) == 0
    }

    /// Whether the file entry at `path` with `mode` and `id` (stage 0) is the
    /// tree's next file.
    mutating func next(path: UnsafeBufferPointer<UInt8>, mode: UInt32, id: GitOID) throws -> Bool {
      guard let (file, prefix) = try nextFile() else { return false }
      guard mode == UInt32(git_tree_entry_filemode_raw(file).rawValue),
        GitOID(git_tree_entry_id(file).pointee) == id
      else { return false }
      let name = git_tree_entry_name(file)!
      let length = strlen(name)
      guard path.count == prefix.count + length,
        prefix.isEmpty
          || prefix.withUnsafeBytes({ memcmp(path.baseAddress!, $0.baseAddress!, prefix.count) == 0 })
      else { return false }
      return memcmp(path.baseAddress! + prefix.count, name, length) == 0
    }

    /// Whether every file of the tree has been met.
    mutating func isExhausted() throws -> Bool { try nextFile() == nil }
  }
}
