internal import Clibgit2
import FolioSystem
import Glibc

/// Where a checkout finds the index entry of a path: libgit2's index, or
/// the index file read in place (``GitIndexFile``).
protocol IndexEntryLookup {
  /// The stage-0 entry at `path`.
  func entry(at path: String) -> GitIndex.Entry?
}

/// An owned `git_index*` (the repository's staging area, or an in-memory
/// merge result), freed on deinit.
package final class GitIndex: IndexEntryLookup {
  let handle: OpaquePointer

  init(handle: OpaquePointer) {
    self.handle = handle
  }

  deinit { git_index_free(handle) }

  /// One entry, copied out of libgit2.
  struct Entry {
    var path: String
    var id: GitOID
    var stage: Int
    var skipWorktree: Bool
    var mode: UInt32
    var size: UInt32
    var mtimeSeconds: Int32
    var mtimeNanoseconds: UInt32
    var inode: UInt32
  }

  private static func copy(_ entry: UnsafePointer<git_index_entry>) -> Entry {
    let e = entry.pointee
    return Entry(
      path: String(cString: e.path), id: GitOID(e.id),
      stage: Int((e.flags & UInt16(GIT_INDEX_ENTRY_STAGEMASK)) >> UInt16(GIT_INDEX_ENTRY_STAGESHIFT)),
      skipWorktree: e.flags_extended & skipWorktreeFlag != 0,
      mode: e.mode, size: e.file_size, mtimeSeconds: e.mtime.seconds, mtimeNanoseconds: e.mtime.nanoseconds,
      inode: e.ino)
  }

  /// The stage-0 entry at `path`.
  func entry(at path: String) -> Entry? {
    guard let entry = git_index_get_bypath(handle, path, 0) else { return nil }
    return Self.copy(entry)
  }

  /// Every entry, in index order.
  var entries: [Entry] {
    (0..<git_index_entrycount(handle)).compactMap { index in
      git_index_get_byindex(handle, index).map(Self.copy)
    }
  }

  /// Whether any path has conflict stages.
  var hasConflicts: Bool { git_index_has_conflicts(handle) != 0 }

  /// Stages blob `id` at `path`, taking stat data from the file at
  /// `filePath` when given (so `git status` sees it as clean without
  /// rehashing), and marking it skip-worktree when asked.
  /// `mode` keeps an existing entry's file mode; by default it comes from
  /// the file (or is a plain file's).
  package func add(
    path: String, id: GitOID, filePath: String?, skipWorktree: Bool = false, mode: UInt32? = nil
  )
    throws
  {
    var entry = Self.entry(id: id, filePath: filePath, mode: mode, skipWorktree: skipWorktree)
    try path.withCString { pointer in
      entry.path = pointer
      try LibGit2.check(git_index_add(handle, &entry), "git_index_add", path: path)
    }
  }

  /// A stage-0 entry for blob `id`, with the stat data of the file at
  /// `filePath` when given, so git sees the file as clean without rehashing.
  /// - Parameters:
  ///   - mode: git's file mode; by default the file's (or a plain file's).
  ///   - skipWorktree: marked skip-worktree: git looks for no file there.
  static func entry(id: GitOID, filePath: String?, mode: UInt32? = nil, skipWorktree: Bool = false)
    -> git_index_entry
  {
    // lstat: a symlink's entry takes the link's own stat data, as git's.
    var entry = entry(id: id) { st in filePath.map { lstat($0, &st) == 0 } ?? false }
    if let mode { entry.mode = mode }
    if skipWorktree { entry.flags_extended = skipWorktreeFlag }
    return entry
  }

  /// A stage-0 entry for blob `id`, with the stat data of the file `name`
  /// in the open folder `directory` (`AT_FDCWD` for a path).
  static func entry(id: GitOID, directory: Int32, name: String) -> git_index_entry {
    entry(id: id) { st in fstatat(directory, name, &st, 0) == 0 }
  }

  private static func entry(id: GitOID, stat fill: (inout stat) -> Bool) -> git_index_entry {
    var entry = git_index_entry()
    entry.mode = 0o100644
    entry.id = id.raw
    var st = stat()
    guard fill(&st) else { return entry }
    entry.ctime.seconds = Int32(truncatingIfNeeded: st.st_ctim.tv_sec)
    entry.ctime.nanoseconds = UInt32(truncatingIfNeeded: st.st_ctim.tv_nsec)
    entry.mtime.seconds = Int32(truncatingIfNeeded: st.st_mtim.tv_sec)
    entry.mtime.nanoseconds = UInt32(truncatingIfNeeded: st.st_mtim.tv_nsec)
    entry.dev = UInt32(truncatingIfNeeded: st.st_dev)
    entry.ino = UInt32(truncatingIfNeeded: st.st_ino)
    entry.uid = st.st_uid
    entry.gid = st.st_gid
    entry.file_size = UInt32(truncatingIfNeeded: st.st_size)
    switch st.st_mode & S_IFMT {
    case S_IFLNK: entry.mode = 0o120000
    case S_IFDIR: entry.mode = 0o160000  // a gitlink's folder
    default: if st.st_mode & 0o111 != 0 { entry.mode = 0o100755 }
    }
    return entry
  }

  /// Unstages `path` (all stages).
  func remove(path: String) throws {
    try LibGit2.check(git_index_remove_bypath(handle, path), "git_index_remove_bypath", path: path)
  }

  /// Writes the index's tree (and subtrees) into `repository`.
  func writeTree(to repository: GitRepository) throws -> GitOID {
    var oid = git_oid()
    try LibGit2.check(git_index_write_tree_to(&oid, handle, repository.handle), "git_index_write_tree_to")
    return GitOID(oid)
  }

  /// Reloads the index when the file changed on disk since this handle
  /// read it (a checkout or another process wrote it). An unchanged file
  /// is not read again, so use it on a handle with no unsaved changes:
  /// reading 100,000 entries costs tens of milliseconds each time.
  func readFromDisk() throws {
    // libgit2 cannot read a split index: Folio may have written one since.
    if let path = git_index_path(handle).map({ String(cString: $0) }) {
      try GitIndexFile.unsplitIfNeeded(gitDirectory: FileSystem.split(path).directory)
    }
    try LibGit2.check(git_index_read(handle, 0), "git_index_read")
  }

  /// Saves the index file (the repository's own index only).
  ///
  /// A `.git/index.lock` that a Folio process left when it died is removed
  /// first (``GitIndexLock``); one held by anyone else is a `LOCKED` error
  /// that names the file and the fix.
  package func write() throws {
    let path = git_index_path(handle).map { String(cString: $0) }
    if let path { try GitIndexLock.prepare(index: path) }
    defer { if let path { GitIndexLock.finish(index: path) } }
    let rc = git_index_write(handle)
    if rc == GIT_ELOCKED.rawValue, let path { throw GitIndexLock.lockedError(path + ".lock") }
    try LibGit2.check(rc, "git_index_write")
  }

  /// Replaces the whole content with `tree`'s, keeping stat data where the
  /// blob is unchanged.
  func read(tree: GitTree) throws {
    try LibGit2.check(git_index_read_tree(handle, tree.handle), "git_index_read_tree")
  }
}
