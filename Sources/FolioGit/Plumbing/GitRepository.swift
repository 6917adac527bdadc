internal import Clibgit2
import FolioSystem
import Glibc

/// An open libgit2 repository. Owns its handle and frees it on deinit.
///
/// Confinement rule (libgit2's threading rules: its objects are confined
/// to one serial executor): a `GitRepository`, and every
/// object it hands out (``GitIndex``, ``GitTree``, ``GitCommit``), is
/// created, used and freed on one thread. It is deliberately not `Sendable`
/// (nor `@unchecked Sendable`), so the compiler refuses to let one cross an
/// isolation boundary. In practice each Store operation (commit, sync,
/// status, a merge, the merge driver) opens its own handle inside the call,
/// under the store lock, and drops it before returning; the one long-lived
/// handle, the watcher's (`KnownDocuments`), lives and dies on the thread
/// that runs the watcher. The parallel stat jobs of
/// `Store.folderMatchesHead` read index entries in place (memory nothing
/// changes while the store lock is held) and make no libgit2 call, so no
/// handle and no per-thread libgit2 error state is shared.
package final class GitRepository {
  let handle: OpaquePointer
  /// Where new blobs go inside ``withPackedWrites(workTree:_:)``: straight
  /// into the pack being gathered (see ``writeBlob(_:)``).
  var collector: GitObjectCollector?

  init(handle: OpaquePointer) {
    self.handle = handle
  }

  deinit {
    git_repository_free(handle)
  }

  /// Opens the repository whose working tree is exactly `path` (no search
  /// upward), or returns nil when `path` is not one.
  static func open(workTree path: String) throws -> GitRepository? {
    try LibGit2.start()
    var pointer: OpaquePointer?
    let rc = git_repository_open_ext(
      &pointer, path, GIT_REPOSITORY_OPEN_NO_SEARCH.rawValue, nil)
    if rc == GIT_ENOTFOUND.rawValue {
      // libgit2 1.5 reports a repository it refuses for its owner (git's
      // safe.directory check) as not found; say what is really wrong.
      if let owner = foreignOwner(of: path) {
        throw FolioError(
          .git,
          "\(path) is owned by another user (uid \(owner)), and git refuses repositories it does not trust; "
            + "if you trust it, run 'git config --global --add safe.directory \(path)'",
          path: path, function: "git_repository_open_ext")
      }
      return nil
    }
    try LibGit2.check(rc, "git_repository_open_ext", path: path)
    return GitRepository(handle: pointer!)
  }

  /// The owner of `path` or its `.git` folder when that is neither this
  /// user nor root and `.git` looks like a repository.
  private static func foreignOwner(of path: String) -> uid_t? {
    let git = path + "/.git"
    guard FileSystem.isRegularFile(git + "/HEAD") else { return nil }
    let user = geteuid()
    for candidate in [path, git] {
      var st = stat()
      if stat(candidate, &st) == 0, st.st_uid != user, st.st_uid != 0 { return st.st_uid }
    }
    return nil
  }

  /// The `.git` directory of the repository whose working tree is exactly
  /// `path`, or nil when `path` is not one.
  ///
  /// The common layout (a `.git` folder with `HEAD`, `objects/` and `refs/`,
  /// owned by this user or root, the same tests libgit2 makes) is recognised
  /// without libgit2: starting libgit2 loads the system's TLS certificates,
  /// which costs a fresh `folio query` about a fifth of its time. Anything
  /// else (a `.git` file, another owner, a partial folder) asks libgit2,
  /// which gives the same answer or the error that explains it.
  package static func gitDirectory(workTree path: String) throws -> String? {
    let candidate = (path.hasSuffix("/") ? String(path.dropLast()) : path) + "/.git"
    var st = stat()
    let user = geteuid()
    func ownedHere(_ st: stat) -> Bool { st.st_uid == user || st.st_uid == 0 }
    if lstat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, ownedHere(st),
      stat(path, &st) == 0, ownedHere(st),
      FileSystem.isRegularFile(candidate + "/HEAD"), FileSystem.isDirectory(candidate + "/objects"),
      FileSystem.isDirectory(candidate + "/refs")
    {
      return candidate
    }
    return try open(workTree: path)?.gitDirectory
  }

  /// Creates a repository (with branch `main`) whose working tree is `path`.
  static func initialize(workTree path: String) throws -> GitRepository {
    try LibGit2.start()
    var options = git_repository_init_options()
    try LibGit2.check(
      git_repository_init_options_init(&options, UInt32(GIT_REPOSITORY_INIT_OPTIONS_VERSION)),
      "git_repository_init_options_init")
    options.flags = GIT_REPOSITORY_INIT_MKPATH.rawValue
    var pointer: OpaquePointer?
    let rc = "main".withCString { head in
      options.initial_head = head
      return git_repository_init_ext(&pointer, path, &options)
    }
    try LibGit2.check(rc, "git_repository_init_ext", path: path)
    return GitRepository(handle: pointer!)
  }

  /// The `.git` directory, without a trailing slash.
  package var gitDirectory: String {
    var path = String(cString: git_repository_path(handle))
    while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
    return path
  }
}
