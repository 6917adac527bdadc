import FolioCore
import FolioSystem
import Glibc

/// Git's `index.lock`, as Folio's own index writes take it.
///
/// A process killed while it writes the index leaves `.git/index.lock`
/// behind, and every later commit, import and sync would fail on it. Before
/// each index write Folio records its pid in `.git/folio/index.lock.owner`
/// and removes the record when the write is done, so a lock found later
/// with a record whose process is gone was left by a Folio process that
/// died, and is removed. Any other lock belongs to someone else (git, an
/// IDE, or a crash Folio cannot vouch for) and is reported with the fix.
enum GitIndexLock {
  /// A lock made this long after the owner record was not made by the
  /// recorded write (an index write takes well under this).
  private static let ownerWindow: Int = 120

  /// The owner record for the index at `index` (`.git/index`).
  static func ownerPath(index: String) -> String {
    FileSystem.split(index).directory + "/" + Store.privateFolderName + "/index.lock.owner"
  }

  /// Clears a lock that a dead Folio process left, then records this
  /// process as the index's writer. Call right before the index write.
  /// - Throws: `LOCKED` naming the lock file and the fix if another
  ///   process holds it.
  static func prepare(index path: String) throws {
    let lock = path + ".lock"
    let owner = ownerPath(index: path)
    var lockStat = stat()
    if lstat(lock, &lockStat) == 0 {
      guard leftByDeadFolio(lock: lockStat, owner: owner) else { throw lockedError(lock) }
      // Left by a Folio write that never finished: its content is a torn
      // index that git would never use.
      if unlink(lock) != 0 && errno != ENOENT { throw FileSystem.error(errno, "unlink", path: lock) }
    }
    let directory = FileSystem.split(owner).directory
    if FileSystem.isDirectory(directory) {
      try FileSystem.writeAtomically(owner, Array("\(getpid())\n".utf8), sync: false)
    }
  }

  /// Drops this process's owner record once its index write is done.
  static func finish(index path: String) {
    unlink(ownerPath(index: path))
  }

  /// The error for a lock held by someone else.
  static func lockedError(_ lock: String) -> FolioError {
    FolioError(
      .locked,
      "\(lock) exists: another git process is running, or one crashed: "
        + "remove .git/index.lock if no git is running",
      path: lock)
  }

  /// Whether the owner record names a process that is gone and was
  /// written just before the lock was made.
  private static func leftByDeadFolio(lock: stat, owner: String) -> Bool {
    var ownerStat = stat()
    guard lstat(owner, &ownerStat) == 0,
      let bytes = try? FileSystem.read(owner),
      let pid = Int32(
        String(decoding: bytes.filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }, as: UTF8.self)),
      pid > 0, processIsGone(pid)
    else { return false }
    let made = Int(lock.st_mtim.tv_sec)
    let recorded = Int(ownerStat.st_mtim.tv_sec)
    return made >= recorded - 1 && made <= recorded + ownerWindow
  }

  /// Whether no process `pid` exists now (never this one): `kill(pid, 0)`
  /// fails with ESRCH only when there is no such process.
  static func processIsGone(_ pid: Int32) -> Bool {
    pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
  }
}
