import FolioSystem
import Glibc

/// The thread that tells a running server that `folio.yaml` or its token
/// file changed: inotify on the folders that hold them, on an
/// ``EventLoop`` of its own, never polled on a timer.
///
/// Folders, not the files: `folio tables rm` and editors replace a file by
/// rename, which a watch on the old inode would not see.
final class ServeFileWatch: Sendable {
  private let handle: EventLoop.Handle

  /// Starts watching; `changed` runs on the watch's thread with the path of
  /// each file in `files` that was written, renamed into place or removed,
  /// once per wake-up however many events a save made.
  init(files: [String], changed: @escaping @Sendable (String) -> Void) throws {
    handle = try EventLoop.startThread(named: "folio.serve.files") { loop, started in
      let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
      var seen: Set<String> = []
      // One watch per folder (a second watch on a folder would replace the
      // first's handler), with the names wanted in it.
      var folders: [String: [String: String]] = [:]
      for file in files {
        let (directory, name) = FileSystem.split(file)
        folders[directory.isEmpty ? "." : directory, default: [:]][name] = file
      }
      for (folder, names) in folders.sorted(by: { $0.key < $1.key }) {
        let added = try loop.watch(folder, mask: mask) { event in
          if let file = names[event.name] { seen.insert(file) }
        }
        guard added != nil else {
          throw FolioError(.io, "cannot watch \(folder) for changes to \(names.keys.sorted())", path: folder)
        }
      }
      // The kernel dropped events: any of the files may have changed.
      loop.onOverflow { seen.formUnion(files) }
      loop.afterWake = {
        for file in seen.sorted() { changed(file) }
        seen.removeAll()
      }
      started()
      try loop.run()
    }
  }

  /// Ends the thread.
  func stop() { handle.stop() }
}
