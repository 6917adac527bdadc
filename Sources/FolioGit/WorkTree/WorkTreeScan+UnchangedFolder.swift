internal import Clibgit2
import FolioCore
import FolioJSON
import FolioSystem
import Foundation
import Glibc

extension WorkTreeScan {
  /// Whether every document file of `table` is exactly as committed: git's
  /// index holds what HEAD holds for the folder, each file's stat data
  /// matches its index entry, and the folder has no document file the
  /// index does not know. Evicted documents (skip-worktree, no file) count
  /// as committed.
  ///
  /// This is the common case for `folio watch`'s catch-up and for a commit
  /// after a quiet period, and it is decided without a Swift string per
  /// file: one ordered walk over HEAD's folder tree and the index (both
  /// sorted by name), one `fstatat` per file relative to the folder, and a
  /// count of the folder's `*.json` names. When it is false, the caller
  /// does the full scan, which finds what differs.
  func folderMatchesHead(
    _ table: TableConfig, headTree: GitTree?, index: GitIndex, repository: GitRepository,
    evicted: Set<ExactKey>
  ) throws -> Bool {
    guard let headTree else { return false }
    var folderEntry: OpaquePointer?
    guard git_tree_entry_bypath(&folderEntry, headTree.handle, table.path) == 0, let folderEntry else {
      return false
    }
    defer { git_tree_entry_free(folderEntry) }
    guard git_tree_entry_type(folderEntry) == GIT_OBJECT_TREE else { return false }
    let folder = try repository.tree(GitOID(git_tree_entry_id(folderEntry).pointee))
    return try foldersMatchHead(
      table.layout, path: table.path, folder: folder, level: 0, index: index, repository: repository,
      evicted: evicted)
  }

  /// Whether the folders of `level` inside the folder at `path` (`folder`
  /// in HEAD) match HEAD, down to the document files: each folder HEAD
  /// has, and no other folder there with a document-like file in it.
  private func foldersMatchHead(
    _ layout: TableLayout, path: String, folder: GitTree, level: Int, index: GitIndex,
    repository: GitRepository, evicted: Set<ExactKey>
  ) throws -> Bool {
    guard level < layout.depth else {
      return try folderMatchesHead(
        path: path, folder: folder, index: index, repository: repository, evicted: evicted)
    }
    var names = Set<String>()
    for position in 0..<git_tree_entrycount(folder.handle) {
      guard let entry = git_tree_entry_byindex(folder.handle, position) else { return false }
      let name = String(cString: git_tree_entry_name(entry))
      guard git_tree_entry_type(entry) == GIT_OBJECT_TREE, layout.isFolder(name, level: level) else {
        continue
      }
      names.insert(name)
      guard
        try foldersMatchHead(
          layout, path: path + "/" + name,
          folder: try repository.tree(GitOID(git_tree_entry_id(entry).pointee)), level: level + 1,
          index: index, repository: repository, evicted: evicted)
      else { return false }
    }
    let directory = store.rootPath + "/" + path
    for name in try FileSystem.list(directory) ?? []
    where layout.isFolder(name, level: level) && !names.contains(name) {
      if Self.holdsDocumentLikeNames(directory + "/" + name, layout: layout, level: level + 1) {
        return false
      }
    }
    return true
  }

  /// Whether the folder at `path`, of `level` in `layout`, or a folder of
  /// the layout's inside it, holds a document-like file.
  private static func holdsDocumentLikeNames(_ path: String, layout: TableLayout, level: Int) -> Bool {
    let dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard dirfd >= 0 else { return false }
    defer { close(dirfd) }
    guard level < layout.depth else { return countDocumentLikeNames(dirfd) != 0 }
    for name in (try? FileSystem.list(path)) ?? [] where layout.isFolder(name, level: level) {
      if holdsDocumentLikeNames(path + "/" + name, layout: layout, level: level + 1) { return true }
    }
    return false
  }

  /// ``folderMatchesHead(_:headTree:index:repository:evicted:)`` for one
  /// folder of document files, `path` in the store, `folder` in HEAD.
  private func folderMatchesHead(
    path folderPath: String, folder: GitTree, index: GitIndex, repository: GitRepository,
    evicted: Set<ExactKey>
  ) throws -> Bool {
    let prefix = Array((folderPath + "/").utf8CString)  // NUL-terminated
    let prefixLength = prefix.count - 1
    var position = 0
    guard git_index_find_prefix(&position, index.handle, prefix) == 0 else { return false }

    let directory = store.rootPath + "/" + folderPath
    let dirfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard dirfd >= 0 else { return false }
    defer { close(dirfd) }

    let treeCount = git_tree_entrycount(folder.handle)
    let indexCount = git_index_entrycount(index.handle)
    var treePosition = 0
    // Pointers into the index, valid while nothing changes it (the store
    // lock is held, and only this function uses the index meanwhile).
    var documents: [UnsafePointer<git_index_entry>] = []
    while position < indexCount {
      guard let entry = git_index_get_byindex(index.handle, position) else { return false }
      let path = entry.pointee.path!
      // Past the folder's entries (the index is sorted by path bytes).
      if strncmp(path, prefix, prefixLength) != 0 { break }
      position += 1
      guard git_index_entry_stage(entry) == 0 else { return false }
      let name = path + prefixLength
      guard strchr(name, Int32(UInt8(ascii: "/"))) == nil else { return false }  // a subfolder
      // The same name and blob in HEAD's folder, in the same order.
      var id = entry.pointee.id
      guard treePosition < treeCount, let treeEntry = git_tree_entry_byindex(folder.handle, treePosition),
        git_tree_entry_type(treeEntry) == GIT_OBJECT_BLOB, strcmp(git_tree_entry_name(treeEntry), name) == 0,
        git_oid_equal(git_tree_entry_id(treeEntry), &id) != 0
      else { return false }
      treePosition += 1
      if Self.isDocumentLikeName(name) { documents.append(entry) }
    }
    guard treePosition == treeCount else { return false }

    // The stat calls are nearly all of the cost (path lookups in a large
    // folder): they run on every core, beside the count of the folder's
    // names. Each job writes only its own slot.
    let jobs = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
    let chunk = (documents.count + jobs - 1) / jobs
    var results = [Int](repeating: 0, count: jobs + 1)
    results.withUnsafeMutableBufferPointer { slots in
      documents.withUnsafeBufferPointer { entries in
        let shared = StatJobs(entries: entries, results: slots)
        DispatchQueue.concurrentPerform(iterations: jobs + 1) { job in
          if job == jobs {
            shared.results[job] = Self.countDocumentLikeNames(dirfd)
          } else {
            let range = min(job * chunk, shared.entries.count)..<min((job + 1) * chunk, shared.entries.count)
            shared.results[job] = Self.countMatching(
              shared.entries[range], dirfd: dirfd, prefixLength: prefixLength, evicted: evicted)
          }
        }
      }
    }
    guard !results.contains(-1) else { return false }
    // Every entry that matched is a distinct file here; the folder has no
    // other document-like file when the counts agree.
    return results[jobs] == results[..<jobs].reduce(0, +)
  }

  /// How many of `entries` are files whose stat data matches the entry;
  /// evicted documents (skip-worktree and no file) are not counted. -1 when
  /// any differs.
  private static func countMatching(
    _ entries: Slice<UnsafeBufferPointer<UnsafePointer<git_index_entry>>>, dirfd: Int32, prefixLength: Int,
    evicted: Set<ExactKey>
  ) -> Int {
    var st = stat()
    var present = 0
    for entry in entries {
      let e = entry.pointee
      let name = e.path! + prefixLength
      let skipWorktree = e.flags_extended & GitIndex.skipWorktreeFlag != 0
      if fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 {
        // Only an evicted document may be missing.
        guard errno == ENOENT, skipWorktree,
          let pk = PrimaryKey.pk(fromFileName: String(cString: name)), evicted.contains(ExactKey(pk))
        else { return -1 }
        continue
      }
      guard !skipWorktree, (st.st_mode & S_IFMT) == S_IFREG,
        e.file_size == UInt32(truncatingIfNeeded: st.st_size),
        e.mtime.seconds == Int32(truncatingIfNeeded: st.st_mtim.tv_sec),
        e.mtime.nanoseconds == UInt32(truncatingIfNeeded: st.st_mtim.tv_nsec),
        e.ino == UInt32(truncatingIfNeeded: st.st_ino)
      else { return -1 }
      present += 1
    }
    return present
  }

  /// How many document-like names the folder open at `dirfd` holds; -1 when
  /// it cannot be read.
  private static func countDocumentLikeNames(_ dirfd: Int32) -> Int {
    let copy = dup(dirfd)
    guard copy >= 0 else { return -1 }
    guard let dir = fdopendir(copy) else {
      close(copy)
      return -1
    }
    defer { closedir(dir) }
    var names = 0
    while let item = readdir(dir) {
      let isDocument = withUnsafePointer(to: &item.pointee.d_name) { tuple in
        tuple.withMemoryRebound(to: CChar.self, capacity: 256) { Self.isDocumentLikeName($0) }
      }
      if isDocument { names += 1 }
    }
    return names
  }

  /// Whether a file name is one the full scan looks at: `*.json`, not
  /// hidden.
  private static func isDocumentLikeName(_ name: UnsafePointer<CChar>) -> Bool {
    let length = strlen(name)
    guard length > 5, name[0] != CChar(UInt8(ascii: ".")) else { return false }
    return memcmp(name + length - 5, ".json", 5) == 0
  }
}

/// What the parallel jobs of ``WorkTreeScan/folderMatchesHead(_:headTree:index:repository:evicted:)``
/// share. `@unchecked Sendable`: the entries are only read, each job writes
/// only its own result slot, and `concurrentPerform` returns after every
/// job has ended, before the buffers go away.
private struct StatJobs: @unchecked Sendable {
  let entries: UnsafeBufferPointer<UnsafePointer<git_index_entry>>
  let results: UnsafeMutableBufferPointer<Int>
}
