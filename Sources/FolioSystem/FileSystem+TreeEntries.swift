import Glibc

/// Looking at git tree entries in a working tree without ever following a
/// symlink. A path whose leading folder is a symlink (or a file) is not in
/// the working tree, as git's `has_symlink_leading_path` says; ``WorkTree``
/// reads and writes entries the same way.
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

    /// The kind of an entry whose `lstat` mode is `mode`.
    package init(mode: mode_t) {
      switch mode & S_IFMT {
      case S_IFREG: self = .file(executable: mode & 0o111 != 0)
      case S_IFLNK: self = .symlink
      case S_IFDIR: self = .directory
      default: self = .other
      }
    }
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
      if index < components.count - 1 {
        if st.st_mode & S_IFMT != S_IFDIR {
          return .shadowed(by: components[...index].joined(separator: "/"))
        }
        continue
      }
      return TreeEntryKind(mode: st.st_mode)
    }
    return .absent
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
}
