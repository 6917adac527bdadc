import FolioJSON
import FolioSystem
import Glibc

extension Store {
  /// How many edits in a row one document write folds in before it gives
  /// up and leaves the file as the editor saved it.
  private static let foldLimit = 64

  /// Puts one document of a committing transaction in place without ever
  /// overwriting a save another program made after the transaction read the
  /// file.
  ///
  /// The new file is swapped in with `renameat2(RENAME_EXCHANGE)`, so what
  /// it replaced is caught at the old name, atomically; if that is not the
  /// content the transaction read, an editor saved in between: its change
  /// is diffed through the column kinds, applied on top, logged as an op of
  /// its own, and the result swapped in again. A new file goes in with
  /// `RENAME_NOREPLACE`, which fails if an editor created it meanwhile. On
  /// a file system without `renameat2` the check is a read right before a
  /// plain rename.
  /// - Returns: the ops of the edits folded in, in order.
  ///
  /// With `spares` (a deferred write), the new content goes into a spare
  /// file, if one is ready, which is swapped in from the spares' folder;
  /// the file it replaces, or the temp file's, is kept as a spare.
  func placeDocument(
    _ write: Journal.Write, in dirfd: Int32, name: String, sync: Bool, after last: HLC?,
    spares: SpareFiles? = nil
  ) throws -> [Op] {
    var expected = write.oldHash
    var bytes = write.new
    var fold = write.fold
    var folds: [Op] = []
    let temp = FileSystem.temporaryName(for: name)
    let tempPath = FileSystem.split(write.path).directory + "/" + temp

    /// Folds `current` (what the editor left) in; false if it cannot be.
    func foldIn(_ current: [UInt8]?) -> Bool {
      guard let step = fold, let folded = step.apply(over: current) else { return false }
      if !folded.mutation.isEmpty {
        folds.append(
          Op(
            hlc: HLC.next(
              after: folds.last?.hlc ?? last, now: SystemClock.nowMilliseconds(), replica: replicaID),
            table: step.table.name, pk: step.pk, mutation: folded.mutation))
      }
      fold!.original = folded.edited
      fold!.new = folded.folded
      bytes = folded.folded.map { JSONValue.object($0).canonicalBytes() }
      expected = current.map { FNV.hex($0) }
      return true
    }

    func read(_ file: String? = nil, in folder: Int32? = nil, path: String? = nil) throws -> [UInt8]? {
      let display = path ?? write.path
      return try FileSystem.openForReading(in: folder ?? dirfd, name: file ?? name, path: relative(display))
        .map {
          fd in
          defer { close(fd) }
          return try FileSystem.readAll(fd, path: display)
        }
    }

    /// The new content in a file of its own: a ready spare if there is
    /// one, else the temp file next to the document.
    func stage(_ content: [UInt8]) throws -> StagedFile {
      if let spares, let spare = spares.take(), let folder = spares.folder() {
        do {
          if let staged = try StagedFile.spare(spare, in: folder, content, path: tempPath) { return staged }
        } catch {
          spares.keep(spare.name, length: max(spare.length, content.count))
          throw error
        }
      }
      let fd = try FileSystem.createExclusive(in: dirfd, name: temp, path: tempPath)
      do {
        try FileSystem.writeAll(fd, content, path: tempPath)
        if sync { try FileSystem.syscall("fsync", path: tempPath) { fsync(fd) } }
        close(fd)
      } catch {
        close(fd)
        unlinkat(dirfd, temp, 0)
        throw error
      }
      return StagedFile(folder: dirfd, name: temp, path: tempPath, length: content.count, isSpare: false)
    }

    /// Done with a staged file that holds no one's current document: back
    /// to the spares if it is one (or can be made one), else unlinked.
    func discard(_ staged: StagedFile, length: Int) {
      if staged.isSpare {
        spares!.keep(staged.name, length: length)
      } else if spares?.adopt(staged.name, in: staged.folder, length: length) != true {
        unlinkat(staged.folder, staged.name, 0)
      }
    }

    // An edit saved before this point is folded in before anything moves.
    let current = try read()
    if current.map({ FNV.hex($0) }) != expected && !foldIn(current) { return folds }

    for _ in 0..<Store.foldLimit {
      guard let content = bytes else {
        // A removal: only the content the transaction read is removed.
        _ = try FileSystem.syscall("unlinkat", path: write.path, expecting: [ENOENT]) {
          unlinkat(dirfd, name, 0)
        }
        return folds
      }
      let staged = try stage(content)
      let flags = expected == nil ? FileSystem.renameNoReplace : FileSystem.renameExchange
      let renamed: Result<Int32, FileSystem.Errno>
      do {
        renamed = try FileSystem.syscall(
          "renameat2", path: write.path, expecting: [EEXIST, ENOENT, EINVAL, ENOSYS, EXDEV]
        ) { FileSystem.renameat2(staged.folder, staged.name, dirfd, name, flags) }
      } catch {
        discard(staged, length: content.count)
        throw error
      }
      if case .failure(let failure) = renamed {
        let code = failure.code
        if code == EXDEV {
          // The spares are on another file system than the table.
          discard(staged, length: content.count)
          spares?.disable()
          continue
        }
        if code == EEXIST || code == ENOENT {
          // Created (or removed) by someone since it was read.
          discard(staged, length: content.count)
          if !foldIn(try read()) { return folds }
          continue
        }
        // No renameat2 here: check right before a plain rename.
        spares?.disable()
        let now = try read()
        if now.map({ FNV.hex($0) }) != expected {
          discard(staged, length: content.count)
          if !foldIn(now) { return folds }
          continue
        }
        try FileSystem.syscall("renameat", path: write.path) {
          renameat(staged.folder, staged.name, dirfd, name)
        }
        return folds
      }
      if flags == FileSystem.renameNoReplace { return folds }
      // Exchanged: the file that was in place is now at the staged name.
      let replaced = try read(staged.name, in: staged.folder, path: staged.path)
      if replaced.map({ FNV.hex($0) }) == expected {
        discard(staged, length: replaced?.count ?? 0)
        return folds
      }
      // An editor saved over the file after it was read: its save is the
      // file just swapped out, made over the content this write expected,
      // and what is in place now is this write's.
      let placed = fold?.new
      if !foldIn(replaced) {
        // Not a JSON object: put the editor's file back as it was saved.
        try FileSystem.syscall("renameat", path: write.path) {
          renameat(staged.folder, staged.name, dirfd, name)
        }
        return folds
      }
      unlinkat(staged.folder, staged.name, 0)
      fold!.original = placed
      expected = FNV.hex(content)
    }
    return folds
  }
}

/// A document's new content, written to a file of its own and ready to be
/// renamed in: the temp file next to the document, or a spare
/// (``SpareFiles``).
struct StagedFile {
  let folder: Int32
  let name: String
  /// The temp file's path, for errors.
  let path: String
  let length: Int
  let isSpare: Bool

  /// Writes `content` over the zeros of `spare`; nil if it is gone.
  static func spare(_ spare: SpareFiles.Spare, in folder: Int32, _ content: [UInt8], path: String) throws
    -> StagedFile?
  {
    let fd = openat(folder, spare.name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    try FileSystem.writeAll(fd, content, path: path)
    if content.count < spare.length {
      try FileSystem.syscall("ftruncate", path: path) { ftruncate(fd, off_t(content.count)) }
    }
    return StagedFile(folder: folder, name: spare.name, path: path, length: content.count, isSpare: true)
  }
}
