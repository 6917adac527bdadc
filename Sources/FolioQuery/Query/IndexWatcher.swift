import FolioCore
import FolioSystem
import Glibc

/// The process's inotify watches on table folders, which let an order index
/// that passed one full check re-check only the documents named by events
/// since, instead of taking a stat of every file before each query.
///
/// One per process, owned by ``OrderIndexCache`` and used only inside its
/// lock. Watches are not recursive: a hashed table's folder and each of its
/// subfolders have one (``FolderWatchSet``).
package final class IndexWatcher {
  /// One table folder's watches, and the folder they are on.
  struct Watch {
    var set: FolderWatchSet
    var device: UInt64
    var inode: UInt64
  }

  /// Every way a document file can change: writes in place (`IN_MODIFY`
  /// while open, `IN_CLOSE_WRITE` when done), saves by rename (`MOVED_*`),
  /// `cp`, creates, deletes, `touch` and `chmod` (`IN_ATTRIB`); and the folder
  /// itself going away or moving.
  package static let mask: UInt32 =
    UInt32(IN_CLOSE_WRITE) | UInt32(IN_MODIFY) | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM)
    | UInt32(IN_DELETE) | UInt32(IN_CREATE) | UInt32(IN_ATTRIB) | UInt32(IN_DELETE_SELF)
    | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR)

  /// Events that end a watch: the folder was removed, moved or unmounted,
  /// or the kernel dropped the watch.
  package static let lostMask: UInt32 =
    UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_IGNORED) | UInt32(IN_UNMOUNT)

  private let inotify: Inotify
  /// The cache keys of the indexes that share each watch: one folder reached
  /// by two store paths gets one watch id.
  private var owners: [Int32: Set<String>] = [:]

  /// Nil when the process cannot have an inotify instance (the per-user
  /// limit is reached); queries then take a stat of every file, as before.
  init?() {
    guard let inotify = try? Inotify() else { return nil }
    self.inotify = inotify
  }

  /// Starts watching `folder` for the index with cache key `owner`.
  ///
  /// - Returns: the watch, or nil when the folder does not exist, lives on a
  ///   file system whose changes inotify may not all see (NFS, SMB, FUSE and
  ///   other network or user-space file systems, where another machine or
  ///   daemon writes without the local kernel knowing), or no watch can be
  ///   added. Without a watch the index takes the full stat check each time.
  func watch(_ folder: String, table: TableConfig, owner: String) -> Watch? {
    let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard dirfd >= 0 else { return nil }
    defer { close(dirfd) }
    var st = stat()
    guard fstat(dirfd, &st) == 0 else { return nil }
    guard let type = FileSystem.fileSystemType(dirfd), Self.localFileSystems.contains(type) else {
      return nil
    }
    // Watch the very folder just opened, through its descriptor, so that a
    // folder swapped in between cannot be watched in its place.
    var descriptor = try? inotify.addWatch(FileSystem.descriptorPath(dirfd), mask: Self.mask)
    if descriptor == nil {
      // No /proc: watch by path, and keep the watch only if the path named
      // the same folder before and after.
      descriptor = try? inotify.addWatch(folder, mask: Self.mask)
      var after = stat()
      guard stat(folder, &after) == 0, after.st_dev == st.st_dev, after.st_ino == st.st_ino else {
        if let descriptor { inotify.removeWatch(descriptor) }
        return nil
      }
    }
    guard let descriptor else { return nil }
    owners[descriptor, default: []].insert(owner)
    var set = table.watchSet(folder: folder)
    // On failure, `start` has taken back every watch it added.
    guard
      set.start(
        add: { path in path == folder ? descriptor : addWatch(path, owner: owner) },
        remove: { removeWatch($0, owner: owner) })
    else { return nil }
    return Watch(set: set, device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
  }

  /// Adds a watch on the subfolder `path` for `owner`.
  func addWatch(_ path: String, owner: String) -> Int32? {
    guard let descriptor = try? inotify.addWatch(path, mask: Self.mask) else { return nil }
    owners[descriptor, default: []].insert(owner)
    return descriptor
  }

  /// Stops `watch` for `owner`; the watch itself goes when its last owner
  /// does.
  func unwatch(_ watch: Watch, owner: String) {
    for descriptor in watch.set.watches { removeWatch(descriptor, owner: owner) }
  }

  /// Stops one watch id for `owner`.
  func removeWatch(_ descriptor: Int32, owner: String) {
    guard var set = owners[descriptor] else { return }
    set.remove(owner)
    if set.isEmpty {
      owners[descriptor] = nil
      inotify.removeWatch(descriptor)
    } else {
      owners[descriptor] = set
    }
  }

  /// Reads every queued event without waiting and hands each to the owners
  /// of its watch.
  /// - Returns: false when events were lost (`IN_Q_OVERFLOW`, or the queue
  ///   could not be read): every owner must then check everything again.
  func drain(_ deliver: (_ owner: String, _ watch: Int32, _ event: Inotify.Event) -> Void) -> Bool {
    guard let events = try? inotify.readEvents() else { return false }
    var complete = true
    for event in events {
      if event.has(IN_Q_OVERFLOW) {
        complete = false
        continue
      }
      for owner in owners[event.watch] ?? [] { deliver(owner, event.watch, event) }
      // The kernel has dropped this watch; its id may be handed out again.
      if event.has(IN_IGNORED) { owners[event.watch] = nil }
    }
    return complete
  }

  /// `statfs` magic numbers of local file systems, where every change goes
  /// through this kernel and so raises an event (linux/magic.h).
  package static let localFileSystems: Set<UInt64> = [
    0xEF53,  // ext2/3/4
    0x5846_5342,  // xfs
    0x9123_683E,  // btrfs
    0x0102_1994,  // tmpfs
    0x794C_7630,  // overlayfs
    0xF2F5_2010,  // f2fs
    0x2FC1_2FC1,  // zfs
    0xCA45_1A4E,  // bcachefs
    0x3153_464A,  // jfs
    0x5265_4973,  // reiserfs
  ]
}
