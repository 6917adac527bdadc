import Foundation
import Glibc

/// The thread that tells a running server that `folio.yaml` or its token
/// file changed: inotify on the folders that hold them, waited on with
/// `poll` beside a wake pipe, never polled on a timer.
///
/// Folders, not the files: `folio tables rm` and editors replace a file by
/// rename, which a watch on the old inode would not see.
final class ServeFileWatch: Sendable {
  private let inotify: Inotify
  /// A pipe whose write end ``stop()`` closes to wake the thread.
  private let wakeWrite: Int32

  /// Starts watching; `changed` runs on the watch's thread with the path of
  /// each file in `files` that was written, renamed into place or removed.
  init(files: [String], changed: @escaping @Sendable (String) -> Void) throws {
    let inotify = try Inotify()
    var fds: [Int32] = [0, 0]
    try FileSystem.syscall("pipe", path: "") { pipe(&fds) }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    let wakeRead = fds[0]
    wakeWrite = fds[1]
    self.inotify = inotify
    var names: [Int32: [String: String]] = [:]
    let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
    for file in files {
      let (directory, name) = FileSystem.split(file)
      guard let watch = try inotify.addWatch(directory.isEmpty ? "." : directory, mask: mask) else {
        throw FolioError(.io, "cannot watch \(directory) for changes to \(name)", path: file)
      }
      names[watch, default: [:]][name] = file
    }
    let thread = Thread { [names] in
      defer { close(wakeRead) }
      while true {
        var fds = [
          pollfd(fd: inotify.descriptor, events: Int16(POLLIN), revents: 0),
          pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        let n = poll(&fds, 2, -1)
        if n < 0 && errno != EINTR { return }
        if fds[1].revents != 0 { return }
        guard let events = try? inotify.readEvents() else { return }
        // One call per file however many events a save made.
        var seen: Set<String> = []
        for event in events {
          if event.watch == -1 {  // IN_Q_OVERFLOW: any of them may have changed
            seen.formUnion(names.values.flatMap(\.values))
          } else if let file = names[event.watch]?[event.name] {
            seen.insert(file)
          }
        }
        for file in seen.sorted() { changed(file) }
      }
    }
    thread.name = "folio.serve.files"
    thread.start()
  }

  /// Ends the thread; it closes its own end once it has stopped.
  func stop() { close(wakeWrite) }
}
