import Glibc

/// Opening files in a store without following symbolic links.
///
/// Everything in a store's working tree may come from a fetch or from
/// another program, so a link there may point anywhere (design: "Trust
/// boundary"). The store root is trusted; below it, folders are opened one
/// component at a time with `O_DIRECTORY | O_NOFOLLOW`, files with
/// `O_NOFOLLOW`, and temp files with `O_EXCL`, so no link is ever followed
/// on a read or a write.
extension FileSystem {
  /// The name of the temp file that writes `name` atomically, in the same
  /// folder. It starts with a dot, so it is never mistaken for a document.
  package static func temporaryName(for name: String) -> String { "." + name + ".folio-tmp" }

  /// The bytes a temp name adds to a file name (a leading dot and
  /// `.folio-tmp`): a name longer than `NAME_MAX` minus this cannot be
  /// written atomically.
  package static let temporaryNameOverhead = 11

  /// The longest file name the file system takes (`NAME_MAX`).
  package static let maximumNameLength = 255

  /// An `UNSAFE_PATH` error for a link (or a file where a folder should be)
  /// found at `path` inside the store.
  package static func unsafePathError(_ path: String, isLink: Bool) -> FolioError {
    if isLink {
      return FolioError(
        .unsafePath,
        "\(path) is a symbolic link; Folio never follows links inside a store: "
          + "replace it with a regular file or folder (or remove it)",
        path: path)
    }
    return FolioError(
      .unsafePath, "\(path) is not a folder; remove or rename it so Folio can use the folder",
      path: path)
  }

  /// Opens the folder `relative` (components separated by `/`) below the
  /// trusted folder `root`, one component at a time, refusing links.
  /// - Parameter create: make missing folders (each new name flushed in its
  ///   parent, as ``makeDirectories(_:)`` does).
  /// - Returns: an open folder descriptor (the caller closes it), or nil if
  ///   a component is missing and `create` is false.
  /// - Throws: `UNSAFE_PATH` naming the component that is a link or not a
  ///   folder, or a `..` component; `IO` for other failures.
  package static func openDirectory(_ relative: String, under root: String, create: Bool) throws -> Int32? {
    var fd = try syscall("open", path: root) { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    var walked = ""
    for component in relative.split(separator: "/", omittingEmptySubsequences: true) {
      if component == "." { continue }
      let name = String(component)
      walked += walked.isEmpty ? name : "/" + name
      if component == ".." {
        close(fd)
        throw FolioError(.unsafePath, "\(walked) leaves its folder", path: walked)
      }
      let here = root + "/" + walked
      let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
      let next: Int32
      do {
        var opened = try openAt(fd, name, flags, path: here, expecting: [ENOENT, ELOOP, ENOTDIR])
        if case .failure(let failure) = opened, failure.code == ENOENT, create {
          _ = try syscall("mkdirat", path: here, expecting: [EEXIST]) { mkdirat(fd, name, 0o755) }
          // A new folder's name lives in its parent: flush that too.
          _ = fsync(fd)
          opened = try openAt(fd, name, flags, path: here, expecting: [ELOOP, ENOTDIR])
        }
        switch opened {
        case .success(let opened):
          next = opened
        case .failure(let failure):
          var st = stat()
          let isLink = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
          close(fd)
          // Closed once: the catch below must not close the number again,
          // which another thread may have been given by now.
          fd = -1
          if failure.code == ENOENT { return nil }
          throw unsafePathError(walked, isLink: isLink)
        }
      } catch {
        if fd >= 0 { close(fd) }
        throw error
      }
      close(fd)
      fd = next
    }
    return fd
  }

  /// Creates `name` in the folder `dirfd` with `O_EXCL | O_NOFOLLOW`. An
  /// entry already there (a temp file a crash left, or a link planted under
  /// the temp name) is unlinked, which removes the entry itself and never
  /// what a link points to, and the create is tried once more.
  package static func createExclusive(in dirfd: Int32, name: String, path: String) throws -> Int32 {
    let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
    if case .success(let fd) = try openAt(dirfd, name, flags, path: path, expecting: [EEXIST]) { return fd }
    // A folder under the temp name: unlinkat gives EISDIR.
    _ = try syscall("unlinkat", path: path, expecting: [ENOENT]) { unlinkat(dirfd, name, 0) }
    return try openAt(dirfd, name, flags, path: path)
  }

  /// Writes `bytes` to `name` in the folder `dirfd` atomically: an
  /// exclusive temp file, optional fsync, `renameat`. A reader or a crash
  /// sees the old file or the new one, never a mix; a link at `name` is
  /// replaced, not followed.
  /// - Parameter path: the file's path, for errors.
  package static func writeAtomically(
    in dirfd: Int32, name: String, _ bytes: [UInt8], sync: Bool, path: String
  )
    throws
  {
    let temp = temporaryName(for: name)
    let tempPath = split(path).directory + "/" + temp
    let fd = try createExclusive(in: dirfd, name: temp, path: tempPath)
    do {
      try writeAll(fd, bytes, path: tempPath)
      if sync { try syscall("fsync", path: tempPath) { fsync(fd) } }
      close(fd)
    } catch {
      close(fd)
      unlinkat(dirfd, temp, 0)
      throw error
    }
    do {
      try syscall("renameat", path: path) { renameat(dirfd, temp, dirfd, name) }
    } catch {
      unlinkat(dirfd, temp, 0)
      throw error
    }
  }

  /// Writes `path` atomically, opening its folder below the trusted `root`
  /// one component at a time (missing folders are made), so that no link
  /// on the way, at the file or at its temp name is followed.
  /// - Throws: `UNSAFE_PATH` if a folder on the way is a link or a file.
  package static func writeAtomically(_ path: String, _ bytes: [UInt8], sync: Bool, under root: String) throws
  {
    let (directory, name) = split(path)
    let dirfd = try openDirectory(try relativePath(directory, to: root), under: root, create: true)!
    defer { close(dirfd) }
    try writeAtomically(in: dirfd, name: name, bytes, sync: sync, path: path)
  }

  /// Removes `path` below the trusted `root` without following links on the
  /// way. Returns false if there was no file.
  @discardableResult
  static func remove(_ path: String, under root: String) throws -> Bool {
    let (directory, name) = split(path)
    guard let dirfd = try openDirectory(try relativePath(directory, to: root), under: root, create: false)
    else { return false }
    defer { close(dirfd) }
    let removed = try syscall("unlinkat", path: path, expecting: [ENOENT]) { unlinkat(dirfd, name, 0) }
    if case .success = removed { return true }
    return false
  }

  /// Opens `name` in the folder `dirfd` for reading, without following a
  /// link; nil if there is no such file.
  /// - Throws: `UNSAFE_PATH` naming `path` if it is a link.
  package static func openForReading(in dirfd: Int32, name: String, path: String) throws -> Int32? {
    switch try openAt(
      dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, path: path, expecting: [ENOENT, ENOTDIR, ELOOP])
    {
    case .success(let fd): return fd
    case .failure(let failure) where failure.code == ELOOP: throw unsafePathError(path, isLink: true)
    case .failure: return nil
    }
  }

  /// Whether the process may create and replace files in the folder
  /// `dirfd`: false for a read-only folder, an immutable one or a read-only
  /// mount (`faccessat` with the effective ids, as the write will be made).
  package static func isWritableDirectory(_ dirfd: Int32) -> Bool {
    faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS) == 0
  }

  /// `path` relative to `root` (`""` for the root itself).
  /// - Throws: `UNSAFE_PATH` if `path` is not inside `root`.
  package static func relativePath(_ path: String, to root: String) throws -> String {
    if path == root { return "" }
    if path.hasPrefix(root + "/") { return String(path.dropFirst(root.count + 1)) }
    throw FolioError(.unsafePath, "\(path) is outside the store at \(root)", path: path)
  }
}
