internal import Clibgit2
import Glibc

/// An open libgit2 repository. Owns its handle and frees it on deinit.
///
/// Not Sendable: a repository handle is used from one serial executor at a
/// time, as libgit2's threading rules ask.
final class GitRepository {
  let handle: OpaquePointer

  init(handle: OpaquePointer) {
    self.handle = handle
  }

  deinit {
    git_repository_free(handle)
  }

  /// Opens the repository whose working tree is exactly `path` (no search
  /// upward), or returns nil when `path` is not one.
  static func open(workTree path: String) throws -> GitRepository? {
    _ = LibGit2.initialized
    var pointer: OpaquePointer?
    let rc = git_repository_open_ext(
      &pointer, path, GIT_REPOSITORY_OPEN_NO_SEARCH.rawValue, nil)
    if rc == GIT_ENOTFOUND.rawValue { return nil }
    try LibGit2.check(rc, "git_repository_open_ext", path: path)
    return GitRepository(handle: pointer!)
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
  static func gitDirectory(workTree path: String) throws -> String? {
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
    _ = LibGit2.initialized
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
  var gitDirectory: String {
    var path = String(cString: git_repository_path(handle))
    while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
    return path
  }
}
