import FolioCore
import FolioSystem
import Glibc
import Synchronization

/// The lock files git takes to update a ref or its config
/// (`refs/heads/main.lock`, `HEAD.lock`, `packed-refs.lock`, `config.lock`,
/// `FETCH_HEAD.lock`), as Folio's own writes take them through libgit2.
///
/// A Folio process killed while libgit2 updates a ref leaves the lock
/// behind, and every later sync would fail on it. So while a Folio process
/// writes refs or config it keeps a record, `.git/folio/writers/<pid>`, and
/// before the next such write a lock is removed when it was made while a
/// Folio process that is gone was writing (its record is left, and the lock
/// is no older than the record) and no Folio process still alive had begun
/// writing before the lock was made. Any other lock belongs to someone who
/// may still be working (git, an IDE, a live Folio) and is kept; the write
/// then fails with `LOCKED`, naming the file and the fix. `.git/index.lock`
/// has its own record (``GitIndexLock``).
enum GitRefLocks {
  /// A lock made this long after a record was not made by that write.
  private static let window: Int64 = 120 * 1_000_000_000

  /// Nested and concurrent writes of this process share one record.
  private static let writes = Mutex<Int>(0)

  static func writersFolder(gitDirectory: String) -> String {
    gitDirectory + "/" + Store.privateFolderName + "/writers"
  }

  /// Runs `body`, a write of refs or config, with this process's record
  /// in place, after clearing the locks dead Folio processes left.
  static func writing<T>(gitDirectory: String, _ body: () throws -> T) throws -> T {
    let folder = writersFolder(gitDirectory: gitDirectory)
    let record = folder + "/\(getpid())"
    let first = writes.withLock { count in
      count += 1
      return count == 1
    }
    if first {
      recoverStale(gitDirectory: gitDirectory)
      if FileSystem.isDirectory(gitDirectory + "/" + Store.privateFolderName) {
        mkdir(folder, 0o755)
        let fd = open(record, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if fd >= 0 { close(fd) }
      }
    }
    defer {
      let last = writes.withLock { count in
        count -= 1
        return count == 0
      }
      if last { unlink(record) }
    }
    return try body()
  }

  /// Removes the ref and config locks that Folio processes left when they
  /// died (see the type's documentation), and the records of those
  /// processes once nothing they may have left remains.
  static func recoverStale(gitDirectory: String) {
    let folder = writersFolder(gitDirectory: gitDirectory)
    guard let names = try? FileSystem.list(folder), !names.isEmpty else { return }
    var dead: [(name: String, started: Int64)] = []
    var alive: [Int64] = []
    for name in names {
      guard let pid = Int32(name), pid > 0 else { continue }
      var st = stat()
      guard lstat(folder + "/" + name, &st) == 0 else { continue }
      let started = nanoseconds(st.st_mtim)
      if GitIndexLock.processIsGone(pid) {
        dead.append((name, started))
      } else {
        alive.append(started)
      }
    }
    guard !dead.isEmpty else { return }
    var kept = false
    for lock in candidateLocks(gitDirectory: gitDirectory) {
      var st = stat()
      guard lstat(lock, &st) == 0 else { continue }
      let made = nanoseconds(st.st_mtim)
      guard dead.contains(where: { made >= $0.started - 1_000_000_000 && made <= $0.started + window }) else {
        continue
      }
      // A live writer that began before the lock was made may own it.
      if alive.contains(where: { $0 <= made + 1_000_000_000 }) {
        kept = true
        continue
      }
      unlink(lock)
    }
    if !kept {
      for record in dead { unlink(folder + "/" + record.name) }
    }
  }

  /// Every lock file a ref or config write may leave.
  static func candidateLocks(gitDirectory: String) -> [String] {
    var locks = ["HEAD.lock", "ORIG_HEAD.lock", "FETCH_HEAD.lock", "config.lock", "packed-refs.lock"].map {
      gitDirectory + "/" + $0
    }
    var folders = [gitDirectory + "/refs"]
    // Refs nest a few levels (refs/remotes/origin/main); a bound keeps a
    // hostile layout from making this walk long.
    var visited = 0
    while let folder = folders.popLast(), visited < 10_000 {
      visited += 1
      for name in (try? FileSystem.list(folder)) ?? [] {
        let path = folder + "/" + name
        var st = stat()
        guard lstat(path, &st) == 0 else { continue }
        if (st.st_mode & S_IFMT) == S_IFDIR {
          folders.append(path)
        } else if name.hasSuffix(".lock") && (st.st_mode & S_IFMT) == S_IFREG {
          locks.append(path)
        }
      }
    }
    return locks
  }

  private static func nanoseconds(_ time: timespec) -> Int64 {
    Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
  }
}
