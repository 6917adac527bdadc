import FolioCore
import FolioGit
import FolioJSON
import FolioSystem
import Glibc

/// The watcher's view of "what Folio last wrote or recorded" for each
/// document (``WorkTreeScan/knownDocument(table:pk:path:headBlob:ownOps:repository:)``),
/// kept current cheaply between saves.
///
/// It holds this replica's ops since HEAD, by document, and reads only the
/// op log's new tail on each ``refresh()``. When HEAD moves (a commit, a
/// sync) or the log shrinks, it reloads them. Call it with the store lock
/// held, so no writer is half way through.
///
/// It also knows, by content hash, which bytes hold each document's known
/// state, so that Folio's own writes are dropped without being parsed
/// (recognised by content hash):
/// - a document with no ops since HEAD is held by its HEAD blob, whose git
///   id is the SHA-1 of its bytes (a checkout, a sync, a commit);
/// - a document Folio wrote is held by its canonical bytes, the bytes every
///   API write and `folio fmt` produce;
/// - a file the watcher parsed and settled (recorded, or found unchanged)
///   is held by exactly those bytes, until the known state moves on.
final class KnownDocuments {
  private let store: Store
  private let repository: GitRepository
  private var head: GitOID?
  private var headTree: GitTree?
  private var loaded = false
  /// Per table, its files' blob ids at HEAD. Built once per HEAD: libgit2
  /// does not cache large trees, and re-reading a 100k-entry folder for
  /// every save would cost more than the rest of the save.
  private var headBlobs: [String: [String: GitOID]] = [:]
  private var ownOps: [OpHistory.DocumentKey: [Op]] = [:]
  /// How many bytes of the op log `ownOps` covers (always at a line end).
  private var logOffset = 0
  /// Per document, the FNV-1a hash of the bytes the watcher last settled
  /// against the known state. Dropped when the known state moves on.
  private var settled: [OpHistory.DocumentKey: UInt64] = [:]
  /// Per document, the FNV-1a hash of the known state's canonical bytes
  /// (what Folio writes), computed on first need. Dropped with `settled`.
  private var canonical: [OpHistory.DocumentKey: UInt64] = [:]

  init(store: Store) throws {
    self.store = store
    self.repository = try store.openRepository()
  }

  /// Catches up with HEAD and the op log.
  func refresh() throws {
    try OpLog.checkFolder(root: store.rootPath)
    let commit = try repository.headCommit()
    let size = try OpLog.size(of: store.opLogPath)
    if !loaded || commit?.id != head || size < logOffset {
      head = commit?.id
      headTree = try commit?.tree()
      headBlobs = [:]
      settled = [:]
      canonical = [:]
      try reload()
      loaded = true
      return
    }
    guard size > logOffset else { return }
    let tail = try readLog(from: logOffset, to: size)
    for op in try OpHistory.parse(tail[...], file: store.relative(store.opLogPath)) {
      let key = OpHistory.DocumentKey(table: op.table, pk: op.pk)
      ownOps[key, default: []].append(op)
      settled[key] = nil
      canonical[key] = nil
    }
    logOffset = size
  }

  private func reload() throws {
    let name = store.opLogName
    let committed =
      try headTree?.blobID(at: Store.opsFolder + "/" + name).map { try repository.blob($0) } ?? []
    let size = try OpLog.size(of: store.opLogPath)
    let current = try readLog(from: 0, to: size)
    ownOps = try OpHistory(files: [name: current]).ops(since: OpHistory(files: [name: committed]))
    logOffset = size
  }

  private func readLog(from start: Int, to end: Int) throws -> [UInt8] {
    let path = store.opLogPath
    guard end > start else { return [] }
    let fd = try FileSystem.syscall("open", path: path) { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: end - start)
    var done = 0
    while done < bytes.count {
      let n = try bytes.withUnsafeMutableBytes { raw in
        try FileSystem.syscall("pread", path: path) {
          pread(fd, raw.baseAddress! + done, raw.count - done, off_t(start + done))
        }
      }
      if n == 0 { break }
      done += n
    }
    return Array(bytes[..<done])
  }

  /// The document as Folio last wrote or recorded it; nil when absent.
  /// - Parameter path: the file relative to the root.
  func document(table: TableConfig, pk: String, path: String) throws -> JSONObject? {
    try WorkTreeScan(store: store).knownDocument(
      table: table, pk: pk, path: path, headBlob: headBlob(table: table, path: path),
      ownOps: ownOps[OpHistory.DocumentKey(table: table.name, pk: pk)] ?? [], repository: repository)
  }

  private func headBlob(table: TableConfig, path: String) throws -> GitOID? {
    if headBlobs[table.name] == nil {
      headBlobs[table.name] = Dictionary(
        (try headTree?.documentBlobs(of: table, repository: repository) ?? []).map { ($0.name, $0.id) },
        uniquingKeysWith: { first, _ in first })
    }
    return headBlobs[table.name]?[
      String(decoding: path.utf8.dropFirst(table.path.utf8.count + 1), as: UTF8.self)]
  }

  /// Whether `bytes` (whose FNV-1a hash is `hash`) are bytes known to hold
  /// the document's known state, judged by hashes alone: the bytes the
  /// watcher last settled, or the HEAD blob when no op came since.
  func holdsKnownState(_ bytes: [UInt8], hash: UInt64, table: TableConfig, pk: String, path: String) throws
    -> Bool
  {
    let key = OpHistory.DocumentKey(table: table.name, pk: pk)
    if settled[key] == hash { return true }
    guard ownOps[key]?.isEmpty ?? true, let blob = try headBlob(table: table, path: path) else {
      return false
    }
    return try GitRepository.hashBlob(bytes) == blob
  }

  /// Whether an import since HEAD wrote the document (a compact op,
  /// ``Op/fromTree``): until the next commit its file is its content, as
  /// `folio commit` reads it, so no change to it is an edit to record.
  func isImported(table: TableConfig, pk: String) -> Bool {
    ownOps[OpHistory.DocumentKey(table: table.name, pk: pk)]?.contains(where: \.fromTree) ?? false
  }

  /// Whether `hash` is that of the canonical bytes of `known`, the known
  /// state, as every write of Folio's produces them.
  func isCanonical(_ hash: UInt64, of known: JSONObject, table: TableConfig, pk: String) -> Bool {
    let key = OpHistory.DocumentKey(table: table.name, pk: pk)
    if canonical[key] == nil { canonical[key] = FNV.hash(JSONValue.object(known).canonicalBytes()) }
    return canonical[key] == hash
  }

  /// Remembers that bytes with FNV-1a hash `hash` hold the document's known
  /// state: the watcher just settled them. Call after ``refresh()`` has
  /// taken in any op recorded for them.
  func settle(_ hash: UInt64, table: TableConfig, pk: String) {
    settled[OpHistory.DocumentKey(table: table.name, pk: pk)] = hash
  }
}
