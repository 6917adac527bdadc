import Glibc

/// One inotify instance: owns the descriptor and closes it in `deinit`.
///
/// The descriptor is non-blocking; callers wait for it with `poll` and then
/// drain it with ``readEvents()``. Watches are not recursive, and a folder
/// may already hold files by the time its watch is added, so callers scan a
/// folder after watching it (docs/architecture.md, "How the watcher knows a save").
package final class Inotify: Sendable {
  /// One event, with the name copied out of the kernel's buffer.
  package struct Event: Sendable, Hashable {
    /// The watch it belongs to; -1 for `IN_Q_OVERFLOW`.
    package var watch: Int32
    /// `IN_*` bits.
    package var mask: UInt32
    /// Joins the two halves of a rename (`IN_MOVED_FROM`, `IN_MOVED_TO`).
    var cookie: UInt32
    /// The file's name inside the watched folder; empty for events on the
    /// folder itself.
    package var name: String

    /// Whether any of `bits` is set.
    package func has(_ bits: Int32) -> Bool { mask & UInt32(bitPattern: bits) != 0 }
    package func has(_ bits: UInt32) -> Bool { mask & bits != 0 }
  }

  /// The descriptor, for `poll`.
  package let descriptor: Int32

  package init() throws {
    descriptor = try FileSystem.syscall("inotify_init1", path: "") {
      inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    }
  }

  deinit { close(descriptor) }

  /// Watches `path` for `mask`; adding a watch on the same inode again
  /// returns the same id (the mask is replaced).
  /// - Returns: the watch id, or nil when `path` does not exist (it may be
  ///   created later; the caller watches its parent for that).
  package func addWatch(_ path: String, mask: UInt32) throws -> Int32? {
    let expected: Set<Int32> = [ENOENT, ENOTDIR, ENOSPC]
    let added = try FileSystem.syscall("inotify_add_watch", path: path, expecting: expected) {
      inotify_add_watch(descriptor, path, mask)
    }
    switch added {
    case .success(let watch): return watch
    case .failure(let failure) where failure.code == ENOSPC:
      throw FolioError(
        .io,
        "the inotify watch limit is reached; raise fs.inotify.max_user_watches (sysctl) and start again",
        path: path, function: "inotify_add_watch")
    case .failure: return nil
    }
  }

  /// Stops a watch; a watch already gone (its folder was removed) is fine.
  package func removeWatch(_ watch: Int32) {
    _ = inotify_rm_watch(descriptor, watch)
  }

  /// Every event queued now; empty when there are none.
  package func readEvents() throws -> [Event] {
    var events: [Event] = []
    // Large enough for many events at once, and for the largest one
    // (a header plus NAME_MAX + 1 name bytes).
    let capacity = 64 * 1024
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    defer { buffer.deallocate() }
    while true {
      let result = try FileSystem.syscall("read", path: "inotify", expecting: [EAGAIN, EWOULDBLOCK]) {
        read(descriptor, buffer, capacity)
      }
      guard case .success(let count) = result, count > 0 else { return events }
      var offset = 0
      let headerSize = MemoryLayout<inotify_event>.size
      while offset + headerSize <= count {
        let header = buffer.load(fromByteOffset: offset, as: inotify_event.self)
        let nameLength = Int(header.len)
        var name = ""
        if nameLength > 0 {
          let start = buffer.advanced(by: offset + headerSize).assumingMemoryBound(to: UInt8.self)
          // The name is NUL-padded to an alignment boundary.
          let bytes = UnsafeBufferPointer(start: start, count: nameLength)
          let end = bytes.firstIndex(of: 0) ?? nameLength
          name = String(decoding: bytes[..<end], as: UTF8.self)
        }
        events.append(Event(watch: header.wd, mask: header.mask, cookie: header.cookie, name: name))
        offset += headerSize + nameLength
      }
    }
  }
}
