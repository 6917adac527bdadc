import Glibc

/// A git working tree, read and written one tree entry at a time without
/// ever following a symlink: every folder on the way is opened with
/// `O_NOFOLLOW` relative to its verified parent, and an entry is created
/// under a temp name with `O_EXCL` and renamed into place.
///
/// It keeps the last folder it opened, so a batch of entries in one folder
/// (a checkout writing thousands of documents of one table) walks the path
/// once rather than per entry. The open folder stays the one that was
/// verified: a folder swapped for a link afterwards is never written
/// through, as with a walk per entry.
///
/// A file that replaces another is swapped with it (`RENAME_EXCHANGE`),
/// then the old one, now at the temp name, is unlinked: there and then,
/// or later by the ``DeferredUnlinks`` the work tree was given.
///
/// Confinement: one thread uses a `WorkTree`; it is not `Sendable`. The
/// folder it holds open (an ``OpenFolder``) is closed once neither the work
/// tree nor an unlink still pending in it holds it.
package final class WorkTree {
  /// The working tree's root folder.
  package let root: String
  /// The open folder, relative to the root ("" for the root itself).
  private var folder: String?
  private var openFolder: OpenFolder?
  /// Who unlinks the files swapped out, or nil to unlink each at once.
  private let unlinks: DeferredUnlinks?
  /// Whether the file system swaps two names (`renameat2`'s
  /// `RENAME_EXCHANGE`); false once it has refused.
  private var exchanges = true

  /// A working tree rooted at the folder `root`.
  /// - Parameter unlinks: who unlinks the files that written files
  ///   replace, or nil to unlink each before ``write(_:content:mode:)``
  ///   returns.
  package init(root: String, unlinks: DeferredUnlinks? = nil) {
    self.root = root
    self.unlinks = unlinks
  }

  /// Where the folder of an entry stands.
  private enum Parent {
    /// Open (the descriptor stays the `WorkTree`'s), with the entry's name.
    case open(Int32, name: String)
    /// A folder on the way is missing.
    case missing
    /// A folder on the way is a symlink or a file.
    case blocked
  }

  /// What is at `relative`, looked at without following links, and its
  /// `lstat` data in `status` when something is there.
  package func kind(_ relative: String, status: inout stat) throws -> FileSystem.TreeEntryKind {
    switch try parent(of: relative, create: false) {
    case .missing: return .absent
    case .blocked: return try FileSystem.treeEntryKind(root: root, relative: relative)
    case .open(let fd, let name):
      if fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) != 0 {
        let code = errno
        if code == ENOENT { return .absent }
        throw FileSystem.error(code, "fstatat", path: root + "/" + relative)
      }
      return FileSystem.TreeEntryKind(mode: status.st_mode)
    }
  }

  /// The bytes git would hash for the entry at `relative`: a regular file's
  /// content or a symlink's target, read without following anything; nil
  /// when nothing is there.
  package func read(_ relative: String) throws -> [UInt8]? {
    guard case .open(let parent, let name) = try parent(of: relative, create: false) else { return nil }
    var st = stat()
    if fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0 { return nil }
    if st.st_mode & S_IFMT == S_IFLNK {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let n = try FileSystem.syscall("readlinkat", path: root + "/" + relative) {
        readlinkat(parent, name, &buffer, buffer.count)
      }
      return buffer[..<n].map { UInt8(bitPattern: $0) }
    }
    let fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    if fd < 0 {
      let code = errno
      if code == ENOENT { return nil }
      throw FileSystem.error(code, "openat", path: root + "/" + relative)
    }
    defer { close(fd) }
    return try FileSystem.readAll(fd, path: root + "/" + relative)
  }

  /// Writes one git tree entry at `relative`, whole: a file (`0o100644`,
  /// or `0o100755` for an executable), a symlink holding `content` as its
  /// target (`0o120000`), or, for a gitlink (`0o160000`), the empty folder
  /// git leaves for a submodule it has not cloned. Missing folders are
  /// made; an empty folder in the way (a folder replaced by a file) is
  /// removed first. Nothing is flushed: callers sync the file system once
  /// for a batch.
  /// - Throws: `UNSAFE_PATH` when a leading folder is a symlink or a file.
  package func write(_ relative: String, content: [UInt8], mode: UInt32) throws {
    guard case .open(let parent, let name) = try parent(of: relative, create: true) else { return }
    let path = root + "/" + relative
    var st = stat()
    let existing = fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode & S_IFMT : 0
    if mode == 0o160000 {
      if existing == S_IFDIR { return }
      if existing != 0 { try FileSystem.syscall("unlinkat", path: path) { unlinkat(parent, name, 0) } }
      try FileSystem.syscall("mkdirat", path: path) { mkdirat(parent, name, 0o755) }
      return
    }
    let temp = FileSystem.temporaryName(for: name)
    if mode == 0o120000 {
      var target = content.map { CChar(bitPattern: $0) }
      target.append(0)
      _ = try createDroppingLeftover(parent, temp, "symlinkat", path: path) {
        symlinkat(target, parent, temp)
      }
    } else {
      let permissions: mode_t = mode == 0o100755 ? 0o777 : 0o666  // less the umask, as git does
      let fd = try createDroppingLeftover(parent, temp, "openat", path: path) {
        openat(parent, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, permissions)
      }
      do {
        try FileSystem.writeAll(fd, content, path: path)
        close(fd)
      } catch {
        close(fd)
        unlinkat(parent, temp, 0)
        throw error
      }
    }
    do {
      if existing == S_IFDIR { try removeEmptyFolders(parent, name, path: path) }
      if (existing == S_IFREG || existing == S_IFLNK) && exchanges {
        // Swapped rather than renamed over: ext4 flushes a file renamed
        // over another (`auto_da_alloc`) there and then, one write per
        // file, where a swap leaves the data to the batch's one sync.
        let swapped = try FileSystem.syscall(
          "renameat2", path: path, expecting: [ENOENT, EINVAL, ENOSYS, EOPNOTSUPP]
        ) { FileSystem.renameat2(parent, temp, parent, name, FileSystem.renameExchange) }
        switch swapped {
        case .success:
          if let unlinks, let openFolder {
            unlinks.unlink(temp, in: openFolder, path: path)
          } else {
            try FileSystem.syscall("unlinkat", path: path) { unlinkat(parent, temp, 0) }
          }
          return
        case .failure(let failure):
          // ENOENT: removed since it was looked at; a rename puts the file in.
          if failure.code != ENOENT { exchanges = false }
        }
      }
      try FileSystem.syscall("renameat", path: path) { renameat(parent, temp, parent, name) }
    } catch {
      unlinkat(parent, temp, 0)
      throw error
    }
  }

  /// Removes the temp file a write of `relative` leaves if it is stopped
  /// between its swap and its unlink (it holds the content replaced), when
  /// there is one: for a checkout finishing after a crash, which finds
  /// the file already written.
  package func removeLeftover(_ relative: String) throws {
    guard case .open(let parent, let name) = try parent(of: relative, create: false) else { return }
    _ = try FileSystem.syscall("unlinkat", path: root + "/" + relative, expecting: [ENOENT]) {
      unlinkat(parent, FileSystem.temporaryName(for: name), 0)
    }
  }

  /// Removes the entry at `relative` (a file, a symlink, or a gitlink's
  /// folder when it is empty), never following a link. A path whose leading
  /// folder is gone, a link or a file is not in the working tree: nothing
  /// to remove.
  package func remove(_ relative: String) throws {
    guard case .open(let parent, let name) = try parent(of: relative, create: false) else { return }
    var st = stat()
    guard fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return }
    if st.st_mode & S_IFMT == S_IFDIR {
      // A submodule's folder with content is left, as git leaves it.
      if unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY && errno != EEXIST {
        throw FileSystem.error(errno, "unlinkat", path: root + "/" + relative)
      }
      return
    }
    if unlinkat(parent, name, 0) != 0 && errno != ENOENT {
      throw FileSystem.error(errno, "unlinkat", path: root + "/" + relative)
    }
  }

  /// Runs `create` (an `O_EXCL` create of `temp` in `parent`); when a temp
  /// file a crash left behind is in the way, removes it and runs it again.
  private func createDroppingLeftover<T: FixedWidthInteger>(
    _ parent: Int32, _ temp: String, _ function: StaticString, path: String, _ create: () -> T
  ) throws -> T {
    if case .success(let value) = try FileSystem.syscall(function, path: path, expecting: [EEXIST], create) {
      return value
    }
    if unlinkat(parent, temp, 0) != 0 && errno != ENOENT {
      throw FileSystem.error(errno, "unlinkat", path: path)
    }
    return try FileSystem.syscall(function, path: path) { create() }
  }

  /// The open folder that holds `relative`, each folder on the way opened
  /// with `O_NOFOLLOW` relative to the one before, missing ones made when
  /// `create` is set.
  /// - Throws: `UNSAFE_PATH` when creating and a folder on the way is a
  ///   symlink or a file.
  private func parent(of relative: String, create: Bool) throws -> Parent {
    let slash = relative.lastIndex(of: "/")
    let name = String(slash.map { relative[relative.index(after: $0)...] } ?? relative[...])
    let path = slash.map { String(relative[..<$0]) } ?? ""
    if path == folder, let openFolder { return .open(openFolder.descriptor, name: name) }
    var fd = try FileSystem.syscall("open", path: root) { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    var walked = ""
    let components = path.isEmpty ? [] : path.split(separator: "/", omittingEmptySubsequences: false)
    for component in components {
      walked += (walked.isEmpty ? "" : "/") + component
      var next = openat(fd, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      if next < 0 && errno == ENOENT && create {
        if mkdirat(fd, String(component), 0o755) != 0 && errno != EEXIST {
          let code = errno
          close(fd)
          throw FileSystem.error(code, "mkdirat", path: root + "/" + walked)
        }
        next = openat(fd, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      }
      if next < 0 {
        let code = errno
        close(fd)
        if code == ENOENT && !create { return .missing }
        if code == ELOOP || code == ENOTDIR {
          if !create { return .blocked }
          throw FolioError(
            .unsafePath,
            "'\(walked)' is a symlink or a file, and Folio never writes '\(relative)' through it; "
              + "move it aside, then run the command again",
            path: walked, function: "openat")
        }
        throw FileSystem.error(code, "openat", path: root + "/" + walked)
      }
      close(fd)
      fd = next
    }
    folder = path
    openFolder = OpenFolder(owning: fd)
    return .open(fd, name: name)
  }

  /// Removes the folder `name` in `parent` and the empty folders inside
  /// it; throws if anything else is inside.
  private func removeEmptyFolders(_ parent: Int32, _ name: String, path: String) throws {
    let fd = try FileSystem.syscall("openat", path: path) {
      openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }
    defer { close(fd) }
    for child in try FileSystem.list(path) ?? [] {
      try removeEmptyFolders(fd, child, path: path + "/" + child)
    }
    try FileSystem.syscall("unlinkat", path: path) { unlinkat(parent, name, AT_REMOVEDIR) }
  }
}
