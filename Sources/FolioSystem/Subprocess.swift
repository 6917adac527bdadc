internal import CProcess
internal import CSystem
import Glibc

/// A child process run to completion: stdin on `/dev/null`, stdout and
/// stderr read through pipes. It keeps the caller's controlling terminal,
/// so a program that asks for a password on `/dev/tty` (git, ssh) can.
package enum Subprocess {
  /// What a finished child gave back.
  package struct Result: Sendable {
    /// The exit status, or 128 + the signal that ended it.
    package var status: Int32
    /// Everything it wrote to stdout, up to ``outputLimit`` bytes.
    package var stdout: [UInt8]
    /// The last ``outputLimit`` bytes it wrote to stderr.
    package var stderr: [UInt8]
    /// stderr as text.
    package var errorText: String { String(decoding: stderr, as: UTF8.self) }
    /// stdout as text.
    package var outputText: String { String(decoding: stdout, as: UTF8.self) }
  }

  /// How much of each stream is kept: a child's output is not input Folio
  /// may hold without bound.
  package static let outputLimit = 1 << 20

  /// Runs `executable` (looked up in `PATH` when it has no `/`) with
  /// `arguments` and exactly `environment`, and waits for it.
  /// - Parameters:
  ///   - directory: its working directory; nil keeps the caller's.
  ///   - onStderr: called with each chunk of stderr as it arrives (to
  ///     show progress), on the calling thread.
  /// - Throws: `IO` when it cannot be started (`ENOENT` when there is no
  ///   such program).
  package static func run(
    _ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
    onStderr: (([UInt8]) -> Void)? = nil
  ) throws -> Result {
    let out = try FileSystem.pipe(flags: O_CLOEXEC)
    defer { closeIfOpen(out.read) }
    let err: (read: Int32, write: Int32)
    do { err = try FileSystem.pipe(flags: O_CLOEXEC) } catch {
      close(out.write)
      throw error
    }
    defer { closeIfOpen(err.read) }
    let pid: pid_t
    do {
      pid = try spawn(
        executable, arguments, environment: environment, directory: directory, out: out.write, err: err.write)
    } catch {
      close(out.write)
      close(err.write)
      throw error
    }
    close(out.write)
    close(err.write)
    var result = Result(status: 0, stdout: [], stderr: [])
    drain(out: out.read, err: err.read, into: &result, onStderr: onStderr)
    result.status = wait(pid)
    return result
  }

  /// Sets `attributes` so that the child starts with no signal blocked and
  /// the default action for those that stop a program: the caller may
  /// block or ignore them (a test runner, a shell's `&`, a daemon), and
  /// Ctrl-C, SIGTERM and a closed pipe must still stop the child.
  static func restoreSignals(_ attributes: inout posix_spawnattr_t, flags: Int32) {
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
  }

  private static func closeIfOpen(_ fd: Int32) { if fd >= 0 { close(fd) } }

  /// Starts the child with `folio_spawn_tied` (CProcess): it gets SIGTERM
  /// when this process ends, by kill -9 too, so that a `git fetch` or `git
  /// clone` never outlives the command that ran it (and takes its ref
  /// locks from under the next run). The calling thread waits for the
  /// child, and the death signal follows that thread.
  private static func spawn(
    _ executable: String, _ arguments: [String], environment: [String: String], directory: String?,
    out: Int32, err: Int32
  ) throws -> pid_t {
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for variable in envp { free(variable) } }
    var pid = pid_t()
    let rc = directory.withOptionalCString { dir in
      folio_spawn_tied(executable, argv, envp, dir, out, err, &pid)
    }
    guard rc == 0 else { throw FileSystem.error(rc, "fork", path: executable) }
    return pid
  }

  /// Reads both pipes until both reach end of file.
  private static func drain(out: Int32, err: Int32, into result: inout Result, onStderr: (([UInt8]) -> Void)?)
  {
    var fds = [
      pollfd(fd: out, events: Int16(POLLIN), revents: 0), pollfd(fd: err, events: Int16(POLLIN), revents: 0),
    ]
    var buffer = [UInt8](repeating: 0, count: 65536)
    while fds.contains(where: { $0.fd >= 0 }) {
      let ready = poll(&fds, nfds_t(fds.count), -1)
      if ready < 0 {
        if errno == EINTR { continue }
        return
      }
      for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
        let n = buffer.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 {
          fds[index].fd = -1
          continue
        }
        let chunk = Array(buffer[0..<n])
        if index == 0 {
          result.stdout += chunk.prefix(max(0, outputLimit - result.stdout.count))
        } else {
          onStderr?(chunk)
          result.stderr += chunk
          if result.stderr.count > outputLimit {
            result.stderr.removeFirst(result.stderr.count - outputLimit)
          }
        }
      }
    }
  }

  /// Waits for `pid` and returns its status.
  private static func wait(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      if errno != EINTR { return 128 }
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }
}

extension Optional where Wrapped == String {
  /// Calls `body` with the string's C form, or with nil.
  fileprivate func withOptionalCString<T>(_ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let self else { return body(nil) }
    return self.withCString { body($0) }
  }
}
