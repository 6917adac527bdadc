internal import CSystem
import Foundation
import Glibc

/// A process started to outlive the call that starts it (the index daemon),
/// with the Linux-only `posix_spawn` extensions (`addclosefrom_np`,
/// `addchdir_np`, `POSIX_SPAWN_SETSID`) kept here, in the one target that
/// imports the `CSystem` shim.
package enum DetachedProcess {
  /// Starts `executable` detached: in a session of its own (no controlling
  /// terminal, no signals from this one's Ctrl-C), with stdin, stdout and
  /// stderr on /dev/null, no other descriptor inherited, and `/` as its
  /// directory (it must not keep a folder busy). A thread reaps it, so it
  /// never lingers as a zombie of a long-lived process.
  /// - Parameter reaperName: the name of the thread that waits for it.
  /// - Returns: its pid, or nil when it could not be started (errno is set).
  package static func spawn(executable: String, arguments: [String], reaperName: String) -> Int32? {
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    guard posix_spawn_file_actions_init(&actions) == 0 else { return nil }
    defer { posix_spawn_file_actions_destroy(&actions) }
    guard posix_spawnattr_init(&attributes) == 0 else { return nil }
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    posix_spawn_file_actions_addchdir_np(&actions, "/")
    let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID, declared only under _GNU_SOURCE
    Subprocess.restoreSignals(&attributes, flags: setsid)

    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: Glibc.pid_t = 0
    let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    guard rc == 0 else {
      errno = rc
      return nil
    }
    let child = pid
    let reaper = Thread {
      var status: Int32 = 0
      _ = FileSystem.retrying { waitpid(child, &status, 0) }
    }
    reaper.name = reaperName
    reaper.start()
    return pid
  }
}
