import Glibc

/// Writing and reading git tree entries in a working tree without ever
/// following a symlink: every folder on the way is opened with
/// `O_NOFOLLOW` relative to its verified parent, and the entry itself is
/// created under a temp name with `O_EXCL` and renamed into place. A path
/// whose leading folder is a symlink (or a file) is refused, as git's
/// `has_symlink_leading_path` refuses it.
extension FileSystem {
  /// What is at a path in the working tree, looked at without following
  /// links.
  package enum TreeEntryKind: Equatable {
    case absent
    /// A regular file, and whether any execute bit is set.
    case file(executable: Bool)
    case symlink
    case directory
    /// A fifo, socket or device.
    case other
    /// A leading folder of the path is a symlink or not a folder: the
    /// path is not in the working tree (its prefix, relative to the root).
    case shadowed(by: String)
  }

  /// What is at `relative` below the folder `root`.
  package static func treeEntryKind(root: String, relative: String) throws -> TreeEntryKind {
    let components = relative.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    var prefix = root
    for (index, component) in components.enumerated() {
      prefix += "/" + component
      var st = stat()
      if lstat(prefix, &st) != 0 {
        let code = errno
        if code == ENOENT { return .absent }
        if code == ENOTDIR { return .shadowed(by: components[..<index].joined(separator: "/")) }
        throw error(code, "lstat", path: prefix)
      }
      let type = st.st_mode & S_IFMT
      if index < components.count - 1 {
        if type != S_IFDIR { return .shadowed(by: components[...index].joined(separator: "/")) }
        continue
      }
      switch type {
      case S_IFREG: return .file(executable: st.st_mode & 0o111 != 0)
      case S_IFLNK: return .symlink
      case S_IFDIR: return .directory
      default: return .other
      }
    }
    return .absent
  }

  /// The bytes git would hash for the entry at `relative`: a regular file's
  /// content or a symlink's target, read without following anything.
  package static func readTreeEntry(root: String, relative: String) throws -> [UInt8]? {
    let (parent, name) = try openParent(root: root, relative: relative, create: false)
    guard let parent else { return nil }
    defer { close(parent) }
    var st = stat()
    if fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0 { return nil }
    if st.st_mode & S_IFMT == S_IFLNK {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let n = try syscall("readlinkat", path: root + "/" + relative) {
        readlinkat(parent, name, &buffer, buffer.count)
      }
      return buffer[..<n].map { UInt8(bitPattern: $0) }
    }
    let fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    if fd < 0 {
      let code = errno
      if code == ENOENT { return nil }
      throw error(code, "openat", path: root + "/" + relative)
    }
    defer { close(fd) }
    return try readAll(fd, path: root + "/" + relative)
  }

  /// Writes one git tree entry at `relative` below `root`, whole: a file
  /// (`0o100644`, or `0o100755` for an executable), a symlink holding
  /// `content` as its target (`0o120000`), or, for a gitlink (`0o160000`),
  /// the empty folder git leaves for a submodule it has not cloned. Missing
  /// folders are made; an empty folder in the way (a folder replaced by a
  /// file) is removed first. Nothing is flushed: callers sync the file
  /// system once for a batch.
  /// - Throws: `UNSAFE_PATH` when a leading folder is a symlink or a file.
  package static func writeTreeEntry(root: String, relative: String, content: [UInt8], mode: UInt32) throws {
    let (opened, name) = try openParent(root: root, relative: relative, create: true)
    guard let parent = opened else { return }
    defer { close(parent) }
    let path = root + "/" + relative
    var st = stat()
    let existing = fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode & S_IFMT : 0
    if mode == 0o160000 {
      if existing == S_IFDIR { return }
      if existing != 0 { try syscall("unlinkat", path: path) { unlinkat(parent, name, 0) } }
      try syscall("mkdirat", path: path) { mkdirat(parent, name, 0o755) }
      return
    }
    let temp = "." + name + ".folio-tmp"
    // A temp file a crash left behind; O_EXCL below then holds.
    if unlinkat(parent, temp, 0) != 0 && errno != ENOENT {
      throw error(errno, "unlinkat", path: path)
    }
    if mode == 0o120000 {
      var target = content.map { CChar(bitPattern: $0) }
      target.append(0)
      try syscall("symlinkat", path: path) { symlinkat(target, parent, temp) }
    } else {
      let permissions: mode_t = mode == 0o100755 ? 0o777 : 0o666  // less the umask, as git does
      let fd = try syscall("openat", path: path) {
        openat(parent, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, permissions)
      }
      do {
        try writeAll(fd, content, path: path)
        close(fd)
      } catch {
        close(fd)
        unlinkat(parent, temp, 0)
        throw error
      }
    }
    do {
      if existing == S_IFDIR { try removeEmptyFolders(parent, name, path: path) }
      try syscall("renameat", path: path) { renameat(parent, temp, parent, name) }
    } catch {
      unlinkat(parent, temp, 0)
      throw error
    }
  }

  /// Removes the entry at `relative` (a file, a symlink, or a gitlink's
  /// folder when it is empty), never following a link. A path whose leading
  /// folder is gone, a link or a file is not in the working tree: nothing
  /// to remove.
  package static func removeTreeEntry(root: String, relative: String) throws {
    guard case (let parent?, let name) = try openParent(root: root, relative: relative, create: false)
    else { return }
    defer { close(parent) }
    var st = stat()
    guard fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return }
    if st.st_mode & S_IFMT == S_IFDIR {
      // A submodule's folder with content is left, as git leaves it.
      if unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY && errno != EEXIST {
        throw error(errno, "unlinkat", path: root + "/" + relative)
      }
      return
    }
    if unlinkat(parent, name, 0) != 0 && errno != ENOENT {
      throw error(errno, "unlinkat", path: root + "/" + relative)
    }
  }

  /// The paths (relative to `root`) of everything but folders below the
  /// folder `relative`, without following links: what a folder replaced by
  /// a file would lose.
  package static func filesBelow(root: String, relative: String) throws -> [String] {
    var result: [String] = []
    var pending = [relative]
    while let folder = pending.popLast() {
      for name in try list(root + "/" + folder) ?? [] {
        let child = folder + "/" + name
        var st = stat()
        if lstat(root + "/" + child, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
          pending.append(child)
        } else {
          result.append(child)
        }
      }
    }
    return result
  }

  /// Opens the folder that holds `relative`, each folder on the way with
  /// `O_NOFOLLOW` relative to the one before, creating missing ones when
  /// asked. Returns nil (and the name) when a folder is missing and not
  /// created.
  private static func openParent(root: String, relative: String, create: Bool) throws -> (Int32?, String) {
    var components = relative.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    let name = components.removeLast()
    var fd = try syscall("open", path: root) { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    var walked = ""
    for component in components {
      walked += (walked.isEmpty ? "" : "/") + component
      var next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      if next < 0 && errno == ENOENT && create {
        if mkdirat(fd, component, 0o755) != 0 && errno != EEXIST {
          let code = errno
          close(fd)
          throw error(code, "mkdirat", path: root + "/" + walked)
        }
        next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      }
      if next < 0 {
        let code = errno
        close(fd)
        if code == ENOENT && !create { return (nil, name) }
        if code == ELOOP || code == ENOTDIR {
          if !create { return (nil, name) }
          throw FolioError(
            .unsafePath,
            "'\(walked)' is a symlink or a file, and Folio never writes '\(relative)' through it; "
              + "move it aside, then run the command again",
            path: walked, function: "openat")
        }
        throw error(code, "openat", path: root + "/" + walked)
      }
      close(fd)
      fd = next
    }
    return (fd, name)
  }

  /// Removes the folder `name` in `parent` and the empty folders inside
  /// it; throws if anything else is inside.
  private static func removeEmptyFolders(_ parent: Int32, _ name: String, path: String) throws {
    let fd = try syscall("openat", path: path) {
      openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }
    defer { close(fd) }
    for child in try list(path) ?? [] {
      try removeEmptyFolders(fd, child, path: path + "/" + child)
    }
    try syscall("unlinkat", path: path) { unlinkat(parent, name, AT_REMOVEDIR) }
  }
}
