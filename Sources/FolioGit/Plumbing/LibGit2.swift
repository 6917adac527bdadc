internal import Clibgit2
import FolioSystem

/// Process-wide libgit2 set-up and error checking.
enum LibGit2 {
  /// Initialises libgit2 exactly once, on first use.
  ///
  /// Trees of any size up to 64 MB stay in libgit2's object cache (within
  /// its overall 256 MB), as a sync reads a table's tree several times.
  ///
  /// Two of libgit2's checks that git itself does not make are turned off,
  /// as they cost a lookup per object on the hot paths of commit, checkout
  /// and clone:
  /// - checking, for each entry of a tree being written, that the object
  ///   exists (a commit writes a tree of 100,000 documents from the index,
  ///   whose objects Folio wrote or validated itself);
  /// - hashing every object again when it is read. What a fetch brings
  ///   was already hashed and checked by git's `index-pack` with
  ///   `transfer.fsckObjects` on (``SystemGit``), and git trusts its own
  ///   object store the same way.
  ///
  /// libgit2 itself is opened here, on first use, not when the process
  /// starts (see `Clibgit2/include/shim.h`); if it cannot be, this throws
  /// what is missing and how to install it.
  static func start() throws {
    if let error = initialized { throw error }
  }

  private static let initialized: FolioError? = {
    if let error = folio_git2_load_error() {
      return FolioError(.git, "cannot load libgit2: \(String(cString: error))", function: "dlopen")
    }
    git_libgit2_init()
    _ = folio_git_set_strict_checks(0, 0)
    // A table's tree holds an entry per document (4 MB for 100k of them),
    // and a sync reads the same few trees several times over: diffing,
    // validating, updating. By default libgit2 caches no tree over 4 KB.
    _ = folio_git_set_tree_cache_limit(64 << 20)
    return nil
  }()

  /// Throws a `.git` error naming `function` when `rc` is negative. Reads
  /// libgit2's per-thread error state at once, so call it right after the C
  /// call, with no suspension point between.
  static func check(_ rc: Int32, _ function: StaticString, path: String? = nil) throws {
    guard rc < 0 else { return }
    var message = "libgit2 error \(rc)"
    if let error = git_error_last(), let text = error.pointee.message {
      message = String(cString: text)
    }
    if rc == GIT_EOWNER.rawValue {
      message +=
        " (the repository is owned by another user; if you trust it, run "
        + "'git config --global --add safe.directory \(path ?? "<path>")')"
    }
    if rc == GIT_ELOCKED.rawValue { throw lockedError(message, path: path, function: function) }
    throw FolioError(.git, message, path: path, function: "\(function)")
  }

  /// `LOCKED` for libgit2's `GIT_ELOCKED`: a lock someone may still hold
  /// (Folio clears the ones its own dead processes left, see
  /// ``GitRefLocks``), with the fix.
  static func lockedError(_ message: String, path: String? = nil, function: StaticString) -> FolioError {
    FolioError(
      .locked,
      message
        + ": another git process is running, or one crashed; if no git is running, remove the .lock file it names",
      path: path, function: "\(function)")
  }
}
