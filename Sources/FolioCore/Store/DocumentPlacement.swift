import FolioJSON
import FolioSystem
import Glibc

/// One document write of ``StoreWriter/placeDocument(_:in:name:sync:after:spares:)``
/// under way: what it expects to find in place, what it puts there, and
/// the edits folded in so far. Each ``attempt()`` tries to put the content
/// in place once.
final class DocumentPlacement {
  let store: Store
  let write: Journal.Write
  let dirfd: Int32
  let name: String
  let sync: Bool
  let last: HLC?
  let spares: SpareFiles?
  let temp: String
  let tempPath: String
  /// The hash of what the write expects in place; nil: no file.
  var expected: String?
  /// What goes in place; nil: a removal.
  var bytes: [UInt8]?
  var fold: Journal.Fold?
  /// The ops of the edits folded in, in order.
  var folds: [Op] = []

  init(
    store: Store, write: Journal.Write, dirfd: Int32, name: String, sync: Bool, last: HLC?,
    spares: SpareFiles?
  ) {
    self.store = store
    self.write = write
    self.dirfd = dirfd
    self.name = name
    self.sync = sync
    self.last = last
    self.spares = spares
    temp = FileSystem.temporaryName(for: name)
    tempPath = FileSystem.split(write.path).directory + "/" + temp
    expected = write.oldHash
    bytes = write.new
    fold = write.fold
  }

  /// Folds `current` (what the editor left) in; false if it cannot be.
  func foldIn(_ current: [UInt8]?) -> Bool {
    guard let step = fold, let folded = step.apply(over: current) else { return false }
    if !folded.mutation.isEmpty {
      folds.append(
        Op(
          hlc: HLC.next(
            after: folds.last?.hlc ?? last, now: SystemClock.nowMilliseconds(), replica: store.replicaID),
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
    return try FileSystem.openForReading(
      in: folder ?? dirfd, name: file ?? name, path: store.relative(display)
    )
    .map { fd in
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

  /// Tries once to put the content in place.
  /// - Returns: true when done (placed, or left as an editor saved it);
  ///   false to try again, with an edit folded in.
  func attempt() throws -> Bool {
    guard let content = bytes else {
      // A removal: only the content the transaction read is removed.
      _ = try FileSystem.syscall("unlinkat", path: write.path, expecting: [ENOENT]) {
        unlinkat(dirfd, name, 0)
      }
      return true
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
      return try renameFailed(failure.code, staged: staged, content: content)
    }
    if flags == FileSystem.renameNoReplace { return true }
    return try exchanged(staged, content: content)
  }

  /// After `renameat2` failed with `code`: tries again, or renames the
  /// plain way where the call is missing.
  /// - Returns: as ``attempt()``.
  private func renameFailed(_ code: Int32, staged: StagedFile, content: [UInt8]) throws -> Bool {
    if code == EXDEV {
      // The spares are on another file system than the table.
      discard(staged, length: content.count)
      spares?.disable()
      return false
    }
    if code == EEXIST || code == ENOENT {
      // Created (or removed) by someone since it was read.
      discard(staged, length: content.count)
      return !foldIn(try read())
    }
    // No renameat2 here: check right before a plain rename.
    spares?.disable()
    let now = try read()
    if now.map({ FNV.hex($0) }) != expected {
      discard(staged, length: content.count)
      return !foldIn(now)
    }
    try FileSystem.syscall("renameat", path: write.path) {
      renameat(staged.folder, staged.name, dirfd, name)
    }
    return true
  }

  /// After the exchange: the file that was in place is now at the staged
  /// name. What the write expected is dropped; an editor's save made over
  /// it is folded in (or, not a JSON object, put back as it was saved).
  /// - Returns: as ``attempt()``.
  private func exchanged(_ staged: StagedFile, content: [UInt8]) throws -> Bool {
    let replaced = try read(staged.name, in: staged.folder, path: staged.path)
    if replaced.map({ FNV.hex($0) }) == expected {
      discard(staged, length: replaced?.count ?? 0)
      return true
    }
    // An editor saved over the file after it was read: its save is the
    // file just swapped out, made over the content this write expected,
    // and what is in place now is this write's.
    let placed = fold?.new
    if !foldIn(replaced) {
      try FileSystem.syscall("renameat", path: write.path) {
        renameat(staged.folder, staged.name, dirfd, name)
      }
      return true
    }
    unlinkat(staged.folder, staged.name, 0)
    fold!.original = placed
    expected = FNV.hex(content)
    return false
  }
}
