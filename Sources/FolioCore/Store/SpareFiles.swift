import Dispatch
import FolioSystem
import Glibc
import Synchronization

/// Files that deferred writes (``Store/writeDeferringFlush(_:)``) write
/// again instead of creating a file per document and freeing the one it
/// replaces.
///
/// Why: on ext4 without a journal, the inode allocator skips every inode
/// freed in the last minute by reading it, so a steady stream of writes
/// that each create one file and free another gets slower the longer it
/// runs; and on a mount with `discard`, freeing a file's blocks waits on
/// the disk. A spare is a zero-filled file in this process's folder under
/// `.git/folio/spares/`: a write fills it with the new document and
/// swaps it with the document's file (`RENAME_EXCHANGE` across the two
/// folders), so the old file lands under the spare's name, with its inode
/// and its block, ready to be zeroed and written again.
///
/// A spare is written only once its zeros have been flushed, so a crash
/// that loses the unflushed write leaves at the document's name what it
/// would leave of a new file: zeros, or the start of the new content
/// (``StoreWriter/isTornWrite(_:of:)``), never another document's bytes. A file
/// swapped out is zeroed only a checkpoint later (no open of it that began
/// before the swap can still be under way) and only under a write lease,
/// which the kernel grants only while no one else has the file open: a
/// reader who opened the old document keeps reading it whole, and the file
/// is unlinked instead.
///
/// Every folder holds one process's spares under an `flock`, so that a
/// process that finds another's folder unlocked (its owner is gone) may
/// remove it.
final class SpareFiles: Sendable {
  /// At most this many files are kept; past it, a swapped-out file is
  /// unlinked.
  static let limit = 8192

  /// One spare: its name in the folder, and how many bytes it holds (zeros
  /// when ready, an old document when swapped out).
  struct Spare: Sendable {
    let name: String
    let length: Int
  }

  /// How many writes used a spare, and how many swapped-out files were
  /// unlinked instead of kept (someone still had them open, or the folder
  /// was full): for tests.
  struct Statistics: Sendable, Equatable {
    var reused = 0
    var unlinked = 0
  }

  private struct State {
    /// The folder's descriptor (locked), once made; nil before, or when
    /// spares cannot be used here (then `disabled`).
    var folder: Int32?
    var disabled = false
    /// Zero-filled and flushed: may be written.
    var ready: [Spare] = []
    /// Swapped out since the last checkpoint.
    var fresh: [Spare] = []
    /// Swapped out before the last checkpoint: zeroed at the next one.
    var aged: [Spare] = []
    /// Being zeroed, or zeroed and not yet flushed.
    var zeroing = 0
    var zeroed: [Spare] = []
    var serial = 0
    var statistics = Statistics()

    var count: Int { ready.count + fresh.count + aged.count + zeroing + zeroed.count }
  }

  /// `.git/folio/spares`.
  let parentPath: String
  /// This process's folder in it.
  let folderPath: String
  private let state = Mutex(State())
  /// Zeroes swapped-out files and removes the folders of gone processes,
  /// off the write path.
  private let worker = DispatchQueue(label: "folio.spares")

  init(parent: String) {
    parentPath = parent
    let token = FileSystem.randomBytes(6).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }
    folderPath = parent + "/\(getpid())-" + token.concatenated()
  }

  deinit {
    state.withLock { state in
      guard let folder = state.folder else { return }
      for name in FileSystem.list(inDirectory: folder) { unlinkat(folder, name, 0) }
      close(folder)
      rmdir(folderPath)
    }
  }

  var statistics: Statistics { state.withLock { $0.statistics } }

  /// The folder's descriptor, made and locked on first use; nil if spares
  /// cannot be used (the folder cannot be made or locked).
  func folder() -> Int32? {
    state.withLock { state in
      if state.disabled { return nil }
      if let folder = state.folder { return folder }
      _ = mkdir(parentPath, 0o700)
      // Another process may take the new folder for a gone one's between
      // its mkdir and the lock (it is unlocked, and empty) and remove it:
      // then it is made again. Once locked and still there, it is ours.
      var locked: Int32?
      for _ in 0..<3 where locked == nil {
        _ = mkdir(folderPath, 0o700)
        let fd = open(folderPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { continue }
        var st = stat()
        if flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0 {
          locked = fd
        } else {
          close(fd)
        }
      }
      guard let fd = locked else {
        state.disabled = true
        return nil
      }
      state.folder = fd
      let parent = parentPath
      let own = String(folderPath.dropFirst(parentPath.count + 1))
      worker.async { SpareFiles.removeAbandoned(in: parent, keeping: own) }
      return fd
    }
  }

  /// A ready spare to write, if there is one.
  func take() -> Spare? {
    state.withLock { state in
      guard !state.disabled, let spare = state.ready.popLast() else { return nil }
      state.statistics.reused += 1
      return spare
    }
  }

  /// Stops using spares: writes here cannot swap with them (the folder is
  /// on another file system, say).
  func disable() { state.withLock { $0.disabled = true } }

  /// Keeps `spare`, which now holds `length` bytes that are no one's
  /// current document (the file a swap replaced, or a write that did not
  /// go in), to be zeroed and written again; past ``limit`` it is
  /// unlinked.
  func keep(_ name: String, length: Int) {
    let folder = state.withLock { state -> Int32? in
      guard let folder = state.folder else { return nil }
      if state.count < SpareFiles.limit && !state.disabled {
        state.fresh.append(Spare(name: name, length: length))
        return nil
      }
      state.statistics.unlinked += 1
      return folder
    }
    // The block holds `self`, so the folder stays open until it has run.
    if let folder { worker.async { [self] in withExtendedLifetime(self) { _ = unlinkat(folder, name, 0) } } }
  }

  /// Moves `name`, a file in the folder `dirfd` holding `length` bytes that
  /// are no one's current document, into the spares; false if it cannot
  /// be (the caller unlinks it).
  func adopt(_ name: String, in dirfd: Int32, length: Int) -> Bool {
    guard let folder = folder() else { return false }
    let spare = state.withLock { state -> String in
      state.serial += 1
      return "s\(state.serial)"
    }
    guard renameat(dirfd, name, folder, spare) == 0 else {
      if errno == EXDEV { disable() }
      return false
    }
    keep(spare, length: length)
    return true
  }

  /// Runs `flush` (the checkpoint's flush of the file system) and then
  /// offers every spare whose zeros it flushed; then zeroes, in the
  /// background, the files swapped out before the last checkpoint.
  func checkpoint(_ flush: () throws -> Void) throws {
    let flushed = state.withLock { state in
      defer { state.zeroed = [] }
      return state.zeroed
    }
    do {
      try flush()
    } catch {
      state.withLock { $0.zeroed += flushed }
      throw error
    }
    let due = state.withLock { state -> (Int32, [Spare])? in
      state.ready += flushed
      guard let folder = state.folder else { return nil }
      let due = state.aged
      state.aged = state.fresh
      state.fresh = []
      state.zeroing += due.count
      return due.isEmpty ? nil : (folder, due)
    }
    guard let (folder, due) = due else { return }
    worker.async { [self] in zero(due, in: folder) }
  }

  /// Waits until the background work queued so far is done: for tests.
  func waitUntilIdle() { worker.sync {} }

  // MARK: Background work

  /// `fcntl` commands and lease types (fcntl.h), which Glibc does not
  /// export.
  private static let setLease: Int32 = 1024
  private static let writeLease: Int32 = 1
  private static let noLease: Int32 = 2

  private func zero(_ due: [Spare], in folder: Int32) {
    var zeroed: [Spare] = []
    var dropped = 0
    var leases = true
    SpareFiles.ignoreLeaseBreaks
    for spare in due {
      switch leases ? SpareFiles.zeroUnopened(spare, in: folder) : .failed {
      case .zeroed(let length):
        zeroed.append(Spare(name: spare.name, length: length))
        continue
      case .noLeases: leases = false
      case .inUse, .failed: break
      }
      unlinkat(folder, spare.name, 0)
      dropped += 1
    }
    state.withLock { state in
      state.zeroing -= due.count
      state.zeroed += zeroed
      state.statistics.unlinked += dropped
      // Without leases no file can be known to be unopened.
      if !leases { state.disabled = true }
    }
  }

  private enum Zeroing {
    /// Zero-filled, this many bytes long.
    case zeroed(Int)
    /// Someone has it open, or it has other names: unlinked instead.
    case inUse
    case noLeases
    case failed
  }

  /// Fills `spare` with zeros if no one else has it open (a write lease is
  /// granted only then, and any later open waits for its release) and it
  /// has no other name (a hard link made by a deduplicating tool, say,
  /// whose other name must keep its content).
  private static func zeroUnopened(_ spare: Spare, in folder: Int32) -> Zeroing {
    let fd = openat(folder, spare.name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return .failed }
    defer { close(fd) }
    guard fcntl(fd, setLease, writeLease) == 0 else {
      // EAGAIN: someone has it open; EACCES: someone else's file. Anything
      // else: no leases here (a file system without them, or turned off).
      return [EAGAIN, EWOULDBLOCK, EACCES].contains(errno) ? .inUse : .noLeases
    }
    defer { _ = fcntl(fd, setLease, noLease) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return .failed }
    guard st.st_nlink == 1 else { return .inUse }
    // Its size now, not when it was swapped out: a writer that had it open
    // may have made it longer since.
    let zeros = [UInt8](repeating: 0, count: Int(st.st_size))
    return (try? FileSystem.writeAll(fd, zeros, path: spare.name)) != nil ? .zeroed(zeros.count) : .failed
  }

  /// Ignores `SIGIO` unless the process handles it: a lease's holder is
  /// sent it when another process opens the file (a backup reading
  /// `.git`, say), and its default action ends the process.
  private static let ignoreLeaseBreaks: Void = {
    var current = sigaction()
    if sigaction(SIGIO, nil, &current) == 0 && current.__sigaction_handler.sa_handler == nil {
      signal(SIGIO, SIG_IGN)
    }
  }()

  /// Removes the folders in `parent` whose processes are gone (their lock
  /// is free), and what the trash folder of earlier versions left.
  private static func removeAbandoned(in parent: String, keeping own: String) {
    let folders = (try? FileSystem.list(parent)) ?? []
    for name in folders where name != own {
      let fd = open(parent + "/" + name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      guard fd >= 0 else { continue }
      defer { close(fd) }
      guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
      for file in FileSystem.list(inDirectory: fd) { unlinkat(fd, file, 0) }
      rmdir(parent + "/" + name)
    }
    let trash = FileSystem.split(parent).directory + "/trash"
    let fd = open(trash, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    for file in FileSystem.list(inDirectory: fd) { unlinkat(fd, file, 0) }
    rmdir(trash)
  }
}
