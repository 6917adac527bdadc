import FolioSystem
import Glibc

/// A document a transaction read was saved over by another program before
/// the durability point; ``StoreWriter/writeLocked(deferringFlush:checked:_:)`` runs the transaction
/// again on the saved file.
struct DocumentChangedError: Error {
  var path: String
}

/// A document's bytes and what its table's schema said of them, so that a
/// transaction run again (under the lock, or after a retry) does not check
/// the same bytes twice.
package struct CheckedDocument: Sendable {
  var bytes: [UInt8]
  /// The first violation; nil when the document passed.
  var violation: FolioError?
}

extension StoreWriter {
  /// Refuses, before the durability point, a document larger than the
  /// store's limit (`limits: document:` in `folio.yaml`, 16 MiB at most) and
  /// an op-log line longer than its line limit: past them a merge on
  /// another replica could not read what this one wrote, and sync would
  /// fail there for good.
  /// - Throws: `TOO_LARGE`, naming the document.
  func checkSizes(_ writes: [Journal.Write], ops: [(op: Op, bytes: Int)]) throws {
    let limits = store.config.limits
    for write in writes {
      guard let bytes = write.new, bytes.count > limits.documentBytes else { continue }
      var error = FolioError(
        .tooLarge,
        "the document would be \(bytes.count) bytes, more than the store's limit of \(limits.documentBytes) bytes (\(ByteSize.format(limits.documentBytes)), 'limits: document:' in \(Config.fileName)); nothing was written",
        path: store.relative(write.path))
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
      let (directory, name) = FileSystem.split(store.opLogPath)
      let dirfd = try folders.descriptor(for: directory, create: true)!
      try checkWritable(dirfd, directory: directory, file: store.opLogPath)
      var st = stat()
      if fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
        throw FileSystem.unsafePathError(
          store.relative(store.opLogPath), isLink: (st.st_mode & S_IFMT) == S_IFLNK)
      }
    }
    var writable = Set<String>()
    for write in writes {
      let (directory, name) = FileSystem.split(write.path)
      if name.utf8.count + FileSystem.temporaryNameOverhead > FileSystem.maximumNameLength {
        throw FolioError(
          .localConstraint,
          "\(store.relative(write.path)): the file name is \(name.utf8.count) bytes; with Folio's temp name "
            + "it would pass the file system's limit of \(FileSystem.maximumNameLength)",
          path: store.relative(write.path))
      }
      // Nothing to delete in a folder that is not there.
      guard let dirfd = try folders.descriptor(for: directory, create: write.new != nil) else { continue }
      if writable.insert(directory).inserted {
        try checkWritable(dirfd, directory: directory, file: write.path)
      }
      let current = try FileSystem.openForReading(in: dirfd, name: name, path: store.relative(write.path)).map
      {
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
    let folder = store.relative(directory).isEmpty ? "the store's root folder" : store.relative(directory)
    throw FolioError(
      .io,
      "cannot write \(store.relative(file)): \(folder) is not writable (\(String(cString: strerror(code)))); "
        + "make it writable (chmod u+w, or chattr -i) and try again; nothing was written",
      path: store.relative(file), function: "faccessat")
  }

  /// Refuses a transaction whose documents break their tables' schemas,
  /// before anything is written: `put`, `apply`, `update`, the HTTP bridge
  /// and conflict resolutions all commit through here. A document whose
  /// bytes are in `checked` has its verdict there; those checked here are
  /// added. The error points into the bytes about to be written (the
  /// document's canonical form), as
  /// `data/todos/a.json:3:12: error: views: expected integer, got string (schema todos.schema.json#/properties/views)`.
  ///
  /// Evictions write nothing and are not checked; nor are edits an editor
  /// saved meanwhile, which are folded in as they are (the watcher reports
  /// those).
  /// - Throws: `SCHEMA_VIOLATION`.
  func checkSchemas(_ writes: [Journal.Write], checked: inout [String: CheckedDocument]) throws {
    for write in writes {
      if let missing = write.fold?.table.missingSchemaError { throw missing }
      guard let bytes = write.new, let fold = write.fold, let schema = fold.table.schema,
        let document = fold.new
      else { continue }
      if let known = checked[write.path], known.bytes == bytes {
        if let violation = known.violation { throw violation }
        continue
      }
      let violation = schema.validate(.object(document)).first.map {
        $0.error(file: store.relative(write.path), bytes: bytes, table: fold.table.name, pk: fold.pk)
      }
      checked[write.path] = CheckedDocument(bytes: bytes, violation: violation)
      if let violation { throw violation }
    }
  }

  /// Runs `body` once before the store lock is taken, and checks what it
  /// would write against the tables' schemas there, so that the lock is
  /// held for the durability point alone: a schema check is linear in the
  /// document, but the document is input Folio does not control. The
  /// documents checked are returned by path with their bytes and verdict;
  /// the locked run checks only documents whose bytes differ (another
  /// writer got in between).
  ///
  /// A store without schemas skips it. An error from `body` here (it read
  /// files another writer was changing) is left to the locked run to give.
  /// - Throws: `SCHEMA_VIOLATION`, before the lock, with nothing written.
  func checkSchemasBeforeLocking(_ body: (WriteTransaction) throws -> some Any) throws -> [String:
    CheckedDocument]
  {
    guard store.config.tables.contains(where: { $0.schema != nil || $0.schemaMissing }) else { return [:] }
    let transaction = WriteTransaction(store: store, lastHLC: try store.clock.lastHLC())
    do {
      _ = try body(transaction)
    } catch {
      // What the body checked itself (a batch refusing one request) is kept.
      return transaction.checkedWrites
    }
    try checkSchemas(transaction.stagedWrites(), checked: &transaction.checkedWrites)
    return transaction.checkedWrites
  }
}
