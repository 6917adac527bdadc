import Glibc

/// The watcher's view of "what Folio last wrote or recorded" for each
/// document (``Store/knownDocument(table:pk:path:headBlob:ownOps:repository:)``),
/// kept current cheaply between saves.
///
/// It holds this replica's ops since HEAD, by document, and reads only the
/// op log's new tail on each ``refresh()``. When HEAD moves (a commit, a
/// sync) or the log shrinks, it reloads them. Call it with the store lock
/// held, so no writer is half way through.
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

  init(store: Store) throws {
    self.store = store
    self.repository = try store.openRepository()
  }

  /// Catches up with HEAD and the op log.
  func refresh() throws {
    let commit = try repository.headCommit()
    let size = try OpLog.size(of: store.opLogPath)
    if !loaded || commit?.id != head || size < logOffset {
      head = commit?.id
      headTree = try commit?.tree()
      headBlobs = [:]
      try reload()
      loaded = true
      return
    }
    guard size > logOffset else { return }
    let tail = try readLog(from: logOffset, to: size)
    for op in try OpHistory.parse(tail[...], file: store.relative(store.opLogPath)) {
      ownOps[OpHistory.DocumentKey(table: op.table, pk: op.pk), default: []].append(op)
    }
    logOffset = size
  }

  private func reload() throws {
    let name = store.replicaID + ".ndjson"
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
    let fd = try FileSystem.syscall("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
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
    if headBlobs[table.name] == nil {
      headBlobs[table.name] = Dictionary(
        (try headTree?.blobs(in: table.path, repository: repository) ?? []).map { ($0.name, $0.id) },
        uniquingKeysWith: { first, _ in first })
    }
    let name = FileSystem.split(path).name
    return try store.knownDocument(
      table: table, pk: pk, path: path, headBlob: headBlobs[table.name]?[name],
      ownOps: ownOps[OpHistory.DocumentKey(table: table.name, pk: pk)] ?? [], repository: repository)
  }
}
