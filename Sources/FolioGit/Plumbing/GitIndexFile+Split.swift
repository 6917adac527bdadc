import FolioSystem
import Glibc

/// Split indexes: git's index in two files, as `core.splitIndex` makes it.
///
/// A whole index is rewritten and hashed at every commit and checkout:
/// 25 MB for 300,000 documents, most of a small commit's cost. A split
/// index keeps the entries in a shared file that does not change,
/// `.git/sharedindex.<sha>`, and writes in `.git/index` only the entries
/// changed since, with a bitmap of the shared entries they delete (the
/// `link` extension), so a rewrite costs what changed. Git reads and
/// writes this form itself, whatever `core.splitIndex` says.
///
/// The first split links the whole index as the shared one (no copy).
/// Once the changed entries pass a tenth of the shared ones, the next
/// rewrite writes a new shared index: a whole rewrite every so many
/// changes, so each change's share stays constant.
///
/// libgit2 cannot read a split index (the extension is one it must
/// understand and does not), so before Folio hands the index to libgit2
/// it writes it whole (``unsplitIfNeeded(gitDirectory:)``).
extension GitIndexFile {
  /// The changed entries a split index holds, at most, before the next
  /// rewrite writes a new shared index: this many, or a tenth of the
  /// shared index's entries if that is more.
  static let changedEntriesFloor = 2_000

  /// Writes the rewritten index split (`plan` of `edits`).
  /// `reshareAbove` overrides when a new shared index is written (tests).
  func writeSplit(to path: String, _ plan: RewritePlan, edits: [GitIndex.Edit], reshareAbove: Int?) throws {
    let gitDirectory = FileSystem.split(path).directory
    let base: MappedIndexFile
    let sharedPosition: (Int) -> Int?
    if let shared {
      base = shared
      sharedPosition = entries.sharedPosition
    } else if !top.hasExtensions, top.checksum.contains(where: { $0 != 0 }),
      try Self.link(top, asSharedIn: gitDirectory)
    {
      base = top
      sharedPosition = { $0 }
    } else {
      // The whole index has extensions the shared one must not keep (a
      // cached tree that the edits make stale), or no hash to be named by
      // (git's `index.skipHash`).
      return try writeNewShared(to: path, plan, edits: edits)
    }
    var present = [Bool](repeating: false, count: base.offsets.count)
    var changed: [(position: Int?, edit: Int?)] = []
    forEachRewritten(
      plan,
      kept: { range in
        for position in range {
          if let at = sharedPosition(position) { present[at] = true } else { changed.append((position, nil)) }
        }
      },
      edit: { j in if edits[j].entry != nil { changed.append((nil, j)) } })
    guard changed.count <= reshareAbove ?? max(Self.changedEntriesFloor, base.offsets.count / 10) else {
      return try writeNewShared(to: path, plan, edits: edits)
    }
    let deleted = present.indices.filter { !present[$0] }
    let extended =
      changed.contains { $0.position.map { entries[$0].extended } ?? false }
      || edits.contains { ($0.entry?.flags_extended ?? 0) & GitIndex.extendedMask != 0 }
    try GitIndex.writeIndexFile(at: path) { writer in
      writer.appendHeader(entries: changed.count, extended: extended)
      for item in changed {
        if let position = item.position {
          writer.append(copying: entries[position])
        } else {
          try append(edits[item.edit!], to: &writer)
        }
      }
      writer.append(Self.linkExtension(shared: base.checksum, deleted: deleted))
    }
  }

  /// Writes the rewritten index whole as a new shared index, and
  /// `.git/index` as the split index of no changes that names it.
  private func writeNewShared(to path: String, _ plan: RewritePlan, edits: [GitIndex.Edit]) throws {
    let gitDirectory = FileSystem.split(path).directory
    let checksum = try Self.writeSharedIndex(in: gitDirectory) { try writeWhole(&$0, plan, edits: edits) }
    try GitIndex.writeIndexFile(at: path) { writer in
      writer.appendHeader(entries: 0, extended: false)
      writer.append(Self.linkExtension(shared: checksum, deleted: []))
    }
    Self.removeStaleSharedIndexes(in: gitDirectory, keeping: [checksum, shared?.checksum ?? top.checksum])
  }

  /// Makes the whole index `file` the shared index of the split one about
  /// to be written, by a second link to the same file: git and Folio
  /// replace `.git/index` by a rename, never in place, so the shared file
  /// keeps its bytes. False where the file system has no links.
  private static func link(_ file: MappedIndexFile, asSharedIn gitDirectory: String) throws -> Bool {
    let name = gitDirectory + "/sharedindex." + SHA1.hex(file.checksum)
    guard Glibc.link(file.path, name) != 0 else {
      removeStaleSharedIndexes(in: gitDirectory, keeping: [file.checksum])
      return true
    }
    switch errno {
    case EEXIST: return true  // named by its content: the same bytes
    case EPERM, EXDEV, EMLINK, ENOTSUP: return false
    default: throw FileSystem.error(errno, "link", path: name)
    }
  }

  /// Writes a shared index (`body` appends its header and entries) to a
  /// temporary file, then renames it to the name its hash gives; returns
  /// the hash.
  private static func writeSharedIndex(
    in gitDirectory: String, _ body: (inout IndexFileWriter) throws -> Void
  ) throws -> [UInt8] {
    let temporary = gitDirectory + "/sharedindex_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
    let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw FileSystem.error(errno, "open", path: temporary) }
    var renamed = false
    defer { if !renamed { unlink(temporary) } }
    var writer = IndexFileWriter(fd: fd, path: temporary)
    let checksum: [UInt8]
    do {
      try body(&writer)
      checksum = try writer.finish()
    } catch {
      close(fd)
      throw error
    }
    if close(fd) != 0 { throw FileSystem.error(errno, "close", path: temporary) }
    let name = gitDirectory + "/sharedindex." + SHA1.hex(checksum)
    try FileSystem.syscall("rename", path: name) { rename(temporary, name) }
    renamed = true
    return checksum
  }

  /// The `link` extension: the shared index's hash, the bitmap of its
  /// entries deleted, and an empty bitmap of entries replaced (a changed
  /// entry is written as deleted and added again, which git reads alike).
  static func linkExtension(shared: [UInt8], deleted: [Int]) -> [UInt8] {
    let payload = shared + EWAHBitmap.encode(deleted) + EWAHBitmap.encode([])
    var bytes = Array("link".utf8)
    withUnsafeBytes(of: UInt32(payload.count).bigEndian) { bytes += $0 }
    return bytes + payload
  }

  /// Removes the shared indexes other than `keeping` that nothing has
  /// touched for an hour. Git freshens a shared index's time whenever it
  /// reads it, and a git command's temporary index may name an older one
  /// (git keeps them two weeks for that); an hour covers any command
  /// still running.
  static func removeStaleSharedIndexes(in gitDirectory: String, keeping: [[UInt8]]) {
    let kept = Set(keeping.map { "sharedindex." + SHA1.hex($0) })
    let now = time(nil)
    for name in sharedIndexNames(in: gitDirectory) where !kept.contains(name) {
      var st = stat()
      let path = gitDirectory + "/" + name
      guard lstat(path, &st) == 0, now - st.st_mtim.tv_sec > 3600 else { continue }
      unlink(path)
    }
  }

  /// The names of the shared indexes in `gitDirectory` (`sharedindex.*`).
  static func sharedIndexNames(in gitDirectory: String) -> [String] {
    ((try? FileSystem.list(gitDirectory)) ?? nil)?.filter { $0.hasPrefix("sharedindex.") } ?? []
  }

  /// Writes `.git/index` whole if it is split, for libgit2, which cannot
  /// read a split index. A directory listing when there is no shared
  /// index; a whole rewrite when there is a split one.
  static func unsplitIfNeeded(gitDirectory: String) throws {
    guard !sharedIndexNames(in: gitDirectory).isEmpty else { return }
    let path = gitDirectory + "/index"
    guard let file = try GitIndexFile.open(path), file.isSplit else { return }
    let plan = file.rewritePlan([])
    try GitIndex.writeIndexFile(at: path) { try file.writeWhole(&$0, plan, edits: []) }
  }

  /// How many entries the index at `path` has: its header's count, or for
  /// a split index, the count of its merged entries.
  static func entryCount(_ path: String) -> Int {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var header = [UInt8](repeating: 0, count: 12)
    guard pread(fd, &header, 12, 0) == 12 else { return 0 }
    let count = header[8..<12].reduce(0) { $0 << 8 | Int($1) }
    guard !sharedIndexNames(in: FileSystem.split(path).directory).isEmpty,
      let file = try? GitIndexFile.open(path), file.isSplit
    else { return count }
    return file.entries.count
  }
}
