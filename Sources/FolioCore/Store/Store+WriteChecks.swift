import FolioSystem
import Glibc

/// A document a transaction read was saved over by another program before
/// the durability point; ``Store/writeLocked(_:)`` runs the transaction
/// again on the saved file.
struct DocumentChangedError: Error {
  var path: String
}

extension Store {
  /// Refuses, before the durability point, a document larger than the
  /// store's limit (`limits: document:` in `folio.yaml`, 16 MiB at most) and
  /// an op-log line longer than its line limit: past them a merge on
  /// another replica could not read what this one wrote, and sync would
  /// fail there for good.
  /// - Throws: `TOO_LARGE`, naming the document.
  func checkSizes(_ writes: [Journal.Write], ops: [(op: Op, bytes: Int)]) throws {
    let limits = config.limits
    for write in writes {
      guard let bytes = write.new, bytes.count > limits.documentBytes else { continue }
      var error = FolioError(
        .tooLarge,
        "the document would be \(bytes.count) bytes, more than the store's limit of \(limits.documentBytes) bytes (\(ByteSize.format(limits.documentBytes)), 'limits: document:' in \(Config.fileName)); nothing was written",
        path: relative(write.path))
      error.table = write.fold?.table.name
      error.pk = write.fold?.pk
      throw error
    }
    for (op, count) in ops {
      guard count + 1 > limits.opLineBytes else { continue }
      throw FolioError(
        .tooLarge,
        "the op for \(op.table)/\(op.pk) would be a \(count)-byte op-log line, more than the limit of \(limits.opLineBytes) bytes; nothing was written",
        table: op.table, pk: op.pk)
    }
  }

  /// Checks, before the durability point, everything that would make the
  /// journal fail when applied: a name too long for its temp file, a folder
  /// that is a link or a file, a read-only folder, an op log that is a
  /// link, and a document changed since the transaction read it. A journal
  /// that cannot be applied is redone on every open and would block every
  /// later write (a store must never be left unusable), so a fault must be found here, while
  /// nothing is written yet.
  /// - Throws: `LOCAL_CONSTRAINT` for a long name, `UNSAFE_PATH` for a link,
  ///   `IO` for a read-only folder, ``DocumentChangedError`` for a document
  ///   changed behind the transaction's back.
  func checkWrites(_ writes: [Journal.Write], opLog: Bool, folders: WriteFolders) throws {
    if opLog {
      let (directory, name) = FileSystem.split(opLogPath)
      let dirfd = try folders.descriptor(for: directory, create: true)!
      try checkWritable(dirfd, directory: directory, file: opLogPath)
      var st = stat()
      if fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
        throw FileSystem.unsafePathError(relative(opLogPath), isLink: (st.st_mode & S_IFMT) == S_IFLNK)
      }
    }
    var writable = Set<String>()
    for write in writes {
      let (directory, name) = FileSystem.split(write.path)
      if name.utf8.count + FileSystem.temporaryNameOverhead > FileSystem.maximumNameLength {
        throw FolioError(
          .localConstraint,
          "\(relative(write.path)): the file name is \(name.utf8.count) bytes; with Folio's temp name "
            + "it would pass the file system's limit of \(FileSystem.maximumNameLength)",
          path: relative(write.path))
      }
      // Nothing to delete in a folder that is not there.
      guard let dirfd = try folders.descriptor(for: directory, create: write.new != nil) else { continue }
      if writable.insert(directory).inserted {
        try checkWritable(dirfd, directory: directory, file: write.path)
      }
      let current = try FileSystem.openForReading(in: dirfd, name: name, path: relative(write.path)).map {
        fd in
        defer { close(fd) }
        return try FileSystem.readAll(fd, path: write.path)
      }
      if current.map({ FNV.hex($0) }) != write.oldHash { throw DocumentChangedError(path: write.path) }
    }
  }

  private func checkWritable(_ dirfd: Int32, directory: String, file: String) throws {
    if FileSystem.isWritableDirectory(dirfd) { return }
    let code = errno
    let folder = relative(directory).isEmpty ? "the store's root folder" : relative(directory)
    throw FolioError(
      .io,
      "cannot write \(relative(file)): \(folder) is not writable (\(String(cString: strerror(code)))); "
        + "make it writable (chmod u+w, or chattr -i) and try again; nothing was written",
      path: relative(file), function: "faccessat")
  }

  /// Appends the ops of edits folded in while applying a journal (see
  /// ``Journal/Fold``), after the transaction's own, and moves the clock
  /// past them.
  func logFolds(_ folds: [Op], sync: Bool = true) throws {
    var bytes: [UInt8] = []
    for op in folds {
      bytes += op.json.compactBytes()
      bytes.append(UInt8(ascii: "\n"))
    }
    try OpLog.append(bytes, to: opLogPath, at: try OpLog.size(of: opLogPath), root: rootPath, sync: sync)
    if let last = folds.map(\.hlc).max() {
      clock.withLock { state in
        if state.last.map({ $0 < last }) ?? true { state.last = last }
      }
    }
  }

  /// Refuses a table folder, or the op log folder, that is a symbolic link
  /// or lies on a path through one: reads would show, and writes change,
  /// files outside the store. A folder that is missing is fine (it is made
  /// on the first write); one that is a file is found when written to.
  /// - Throws: `UNSAFE_PATH` naming the link.
  func verifyFolders() throws {
    let paths = config.tables.map(\.path) + [Store.opsFolder]
    for path in paths {
      do {
        if let fd = try FileSystem.openDirectory(path, under: rootPath, create: false) { close(fd) }
      } catch let error as FolioError where error.code == .unsafePath {
        // A file where a folder should be is not a link: no document can
        // be read through it, and a write says what is wrong.
        guard error.message.contains("symbolic link") else { continue }
        throw error
      }
    }
  }
}
