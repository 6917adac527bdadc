import FolioCore
import FolioGit
import FolioJSON
import FolioSystem

/// Turns saved files into recorded ops for a ``WatchSession``: it reads each
/// file, diffs it against what Folio last wrote or recorded, and logs the
/// difference, under the store lock so that no write of Folio's
/// interleaves. It also reports each problem once per save. Used only on
/// the thread that runs the watcher.
final class SaveRecorder {
  /// What the recorder asks of the session while it holds the store lock.
  struct Session {
    /// Hands the events queued now to the session, so that a file written
    /// again while it was read is known to be due again.
    var drain: () -> Void
    /// Whether a file is still being saved: due again, or held open by a
    /// writer. Its problem, if any, waits for the save to end.
    var isSettling: (WatchSession.FileKey) -> Bool
  }

  /// One file whose bytes are not what Folio knows, with the mutation that
  /// takes the known state there.
  private struct Change {
    var key: WatchSession.FileKey
    var table: TableConfig
    var pk: String
    var mutation: Mutation
    /// The bytes' hash, when a file remains.
    var hash: UInt64?

    /// The file, relative to the store root.
    var path: String { table.path + "/" + key.name }
  }

  /// One file that could not be taken in (invalid JSON, a key column that
  /// names another pk).
  private struct Problem {
    var key: WatchSession.FileKey
    var path: String
    var error: FolioError
    /// The bytes and the message: the same problem is reported once.
    var signature: String
  }

  /// What one file's save amounts to.
  private enum Outcome {
    /// Nothing to record; the bytes' hash, when they hold the known state.
    case unchanged(hash: UInt64?)
    /// A mutation to log; the bytes' hash, when a file remains.
    case mutation(Mutation, hash: UInt64?)
    case problem(FolioError, signature: String)
  }

  let store: Store
  /// How changed files were settled: by hash, or by parsing.
  let counters: WatchCounters
  private let emit: (WatchEvent) -> Void
  /// Made on first use, under the store lock.
  private var knownDocuments: KnownDocuments?
  /// Per file, the last problem reported and the bytes it was about, so a
  /// problem is reported once per save and not again on a rescan.
  private var reported: [String: String] = [:]

  init(store: Store, counters: WatchCounters, emit: @escaping (WatchEvent) -> Void) {
    self.store = store
    self.counters = counters
    self.emit = emit
  }

  /// The known state of every document, caught up with HEAD and the op
  /// log. Call with the store lock held.
  private func known() throws -> KnownDocuments {
    let known = try knownDocuments ?? KnownDocuments(store: store)
    knownDocuments = known
    try known.refresh()
    return known
  }

  /// Reads each file, diffs it against what Folio last wrote or recorded,
  /// and logs the differences as ops in one transaction, all under the
  /// store lock.
  /// - Returns: false when nothing could be recorded (the store is locked
  ///   for long, a read failed): the caller tries these files again later.
  @discardableResult
  func record(_ keys: [WatchSession.FileKey], session: Session) -> Bool {
    guard !keys.isEmpty else { return true }
    let sorted = keys.sorted { ($0.table, $0.name) < ($1.table, $1.name) }
    var events: [WatchEvent] = []
    var recorded = true
    do {
      try store.lock.withLock {
        var problems: [Problem] = []
        try store.recover()
        let known = try known()
        var evictions: [String: Set<ExactKey>]?
        var changes: [Change] = []
        for key in sorted {
          guard let table = store.config.table(named: key.table),
            let pk = EditorFiles.documentPK(table: table, name: key.name)
          else { continue }
          let path = table.path + "/" + key.name
          switch try examine(table: table, pk: pk, path: path, known: known, evictions: &evictions) {
          case .unchanged(let hash):
            reported[path] = nil
            if let hash { known.settle(hash, table: table, pk: pk) }
          case .mutation(let mutation, let hash):
            reported[path] = nil
            changes.append(Change(key: key, table: table, pk: pk, mutation: mutation, hash: hash))
          case .problem(let error, let signature):
            problems.append(Problem(key: key, path: path, error: error, signature: signature))
          }
        }
        // A file written to while it was read was caught half way: it is
        // read again once quiet, and only then is a problem reported. A
        // file a writer still holds open is not a save yet: its close
        // brings it back.
        session.drain()
        for problem in problems {
          if session.isSettling(problem.key) {
            reported[problem.path] = nil
          } else if reported[problem.path] != problem.signature {
            reported[problem.path] = problem.signature
            events.append(.problem(problem.error))
          }
        }
        guard !changes.isEmpty else { return }
        let ops = try store.writeLocked { transaction in
          for change in changes { transaction.log(change.mutation, table: change.table, pk: change.pk) }
          return transaction.ops
        }
        // The file now holds the known state: take in the ops just logged
        // (the lock is held, so they are the whole new tail), then remember
        // the bytes, so the same bytes seen again are dropped by hash.
        try known.refresh()
        for change in changes {
          if let hash = change.hash { known.settle(hash, table: change.table, pk: change.pk) }
        }
        for (op, change) in zip(ops, changes) { events.append(.recorded(op, file: change.path)) }
      }
    } catch {
      recorded = false
      events.append(
        .problem(error as? FolioError ?? FolioError(.io, "could not record saves: \(error)")))
    }
    for event in events { emit(event) }
    return recorded
  }

  private func examine(
    table: TableConfig, pk: String, path: String, known: KnownDocuments,
    evictions: inout [String: Set<ExactKey>]?
  ) throws -> Outcome {
    let absolute = store.rootPath + "/" + path
    guard let bytes = try FileSystem.read(absolute) else {
      // Evicting removes the local copy only: not a delete.
      let evicted = try evictions ?? store.evictions.load()
      evictions = evicted
      if evicted[table.name]?.contains(ExactKey(pk)) == true { return .unchanged(hash: nil) }
      guard try known.document(table: table, pk: pk, path: path) != nil else { return .unchanged(hash: nil) }
      return .mutation(Mutation(kind: .remove), hash: nil)
    }
    // Folio's own writes (API mutations, sync checkouts, `fmt`) and files
    // already settled are told by their hash, without parsing them.
    let hash = FNV.hash(bytes)
    if try known.holdsKnownState(bytes, hash: hash, table: table, pk: pk, path: path) {
      counters.countHashMatch()
      return .unchanged(hash: hash)
    }
    if known.isImported(table: table, pk: pk) {
      // An uncommitted import's document: the file is the content (the
      // op carries no body to diff against), as `folio commit` takes it.
      counters.countImported()
      return .unchanged(hash: hash)
    }
    let current = try known.document(table: table, pk: pk, path: path)
    if let current, known.isCanonical(hash, of: current, table: table, pk: pk) {
      counters.countHashMatch()
      return .unchanged(hash: hash)
    }
    // No hash known for these bytes: parse and compare. A save that only
    // reformats (same value, other bytes) is no op, and its bytes are
    // remembered; one that also changes the value is recorded.
    counters.countParse()
    let document: JSONObject
    do {
      document = try WorkTreeScan(store: store).parseEditedDocument(bytes, table: table, pk: pk, path: path)
    } catch let error as FolioError {
      return .problem(error, signature: FNV.hex(bytes) + "\n" + error.description)
    }
    if DocumentResolver.same(current, document) { return .unchanged(hash: hash) }
    // A save that breaks the table's schema is reported like invalid JSON,
    // and recorded once a later save is valid.
    if let problem = store.config.schemaProblems(document, bytes: bytes, table: table, path: path).first {
      return .problem(problem, signature: FNV.hex(bytes) + "\n" + problem.description)
    }
    let mutation = Mutation.diff(from: current, to: document, kinds: table.kind(of:))
    return mutation.isEmpty ? .unchanged(hash: hash) : .mutation(mutation, hash: hash)
  }

  /// Records every change made while nothing watched (or while events were
  /// lost): the scan `folio commit` does, logged as ops without a commit.
  /// - Parameter open: files a writer holds open; their problems are
  ///   reported, if need be, once they are closed.
  func catchUp(skipping open: Set<WatchSession.FileKey>) throws {
    var events: [WatchEvent] = []
    try store.lock.withLock {
      try store.recover()
      let repository = try store.openRepository()
      let head = try repository.headCommit()
      let index = try repository.index()
      let scan = try WorkTreeScan(store: store).scanPending(
        repository: repository, headTree: try head?.tree(), index: index)
      if !scan.refresh.isEmpty {
        // Files touched but unchanged (a checkout, `touch`): fresh stat data
        // in git's index spares the next start from reading them again.
        for entry in scan.refresh {
          try index.add(path: entry.path, id: entry.id, filePath: store.rootPath + "/" + entry.path)
        }
        try index.write()
      }
      var seen = Set<String>()
      let openPaths = Set(
        open.compactMap { key in store.config.table(named: key.table).map { $0.path + "/" + key.name } })
      // Edits made meanwhile that break the schema wait, reported, too.
      var synthetic: [PendingDocument] = []
      var problems = scan.problems
      for document in scan.documents where document.synthetic != nil {
        if let bytes = document.bytes, let object = document.document,
          let problem = store.config.schemaProblems(
            object, bytes: bytes, table: document.table, path: document.path
          )
          .first
        {
          problems.append(problem)
        } else {
          synthetic.append(document)
        }
      }
      for problem in problems {
        let path = problem.location?.file ?? problem.path ?? ""
        if openPaths.contains(path) { continue }
        seen.insert(path)
        let bytes = (try? FileSystem.read(store.rootPath + "/" + path)) ?? nil
        let signature = FNV.hex(bytes ?? []) + "\n" + problem.description
        if reported[path] != signature {
          reported[path] = signature
          events.append(.problem(problem))
        }
      }
      for path in Array(reported.keys) where !seen.contains(path) { reported[path] = nil }
      guard !synthetic.isEmpty else { return }
      let ops = try store.writeLocked { transaction in
        for document in synthetic {
          guard var mutation = document.synthetic else { continue }
          // A new file gets its whole body in the op, not the compact
          // insert a commit logs (whose body is in the commit): until a
          // commit, the watcher diffs later saves against what ops say.
          if document.syntheticFromTree, let body = document.document {
            mutation = Mutation.diff(from: nil, to: body, kinds: document.table.kind(of:))
          }
          transaction.log(mutation, table: document.table, pk: document.pk)
        }
        return transaction.ops
      }
      for (op, document) in zip(ops, synthetic) { events.append(.recorded(op, file: document.path)) }
    }
    for event in events { emit(event) }
  }
}
