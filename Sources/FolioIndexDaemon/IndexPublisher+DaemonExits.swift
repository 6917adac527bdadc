import FolioCore
import FolioSystem
import Foundation
import Glibc

extension IndexPublisher {
  /// Watches what ends a daemon (see ``Exit``) on `loop`: the store's
  /// folders, `folio.yaml` and this program's executable, seen by inotify,
  /// not by polling. Each event that ends it calls `end` with the reason.
  /// - Returns: false when the store is already gone.
  /// - Throws: `IO` when inotify cannot watch the store's folders.
  static func watchForExit(store: Store, loop: EventLoop, end: @escaping (Exit) -> Void) throws -> Bool {
    let gone = UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)
    let removed = UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
    let written = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)
    // A folder's own IN_DELETE_SELF waits until nothing pins it, and this
    // process's open `publisher.lock` pins `.git/folio`: so watch each
    // folder's parent for its removal, which is reported at once.
    let (gitParent, gitName) = FileSystem.split(store.gitDirectory)
    var masks: [String: UInt32] = [:]
    masks[store.privateDirectory, default: 0] |= gone
    masks[store.gitDirectory, default: 0] |= gone | removed
    masks[gitParent, default: 0] |= removed
    masks[store.rootPath, default: 0] |= gone | removed | written
    for (path, mask) in masks {
      let watch = try loop.watch(path, mask: mask | UInt32(IN_ONLYDIR)) { event in
        if event.has(gone) || event.has(IN_IGNORED) || event.has(IN_UNMOUNT) { return end(.storeGone) }
        if event.has(removed)
          && (path == store.gitDirectory && event.name == Store.privateFolderName
            || path == gitParent && event.name == gitName)
        {
          return end(.storeGone)
        }
        if path == store.rootPath && event.name == Config.fileName && event.has(removed | written) {
          end(.configChanged)
        }
      }
      if watch == nil { return false }
    }
    loop.onOverflow {
      if !FileSystem.isDirectory(store.privateDirectory) { end(.storeGone) }
    }
    // Replacing a binary unlinks the old one (its link count changes:
    // IN_ATTRIB) or writes over it; the old one's IN_DELETE_SELF would wait
    // for this process to exit.
    if let executable = FileSystem.executablePath() {
      _ = try? loop.watch(
        executable,
        mask: UInt32(IN_ATTRIB) | UInt32(IN_MODIFY) | UInt32(IN_MOVE_SELF) | UInt32(IN_DELETE_SELF)
      ) { _ in end(.executableReplaced) }
    }
    // Gone between opening the store and the watches: no event will come.
    return FileSystem.isDirectory(store.privateDirectory)
  }
}
