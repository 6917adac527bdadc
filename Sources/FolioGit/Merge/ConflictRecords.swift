import Dispatch
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Foundation

/// The conflict records a merge wrote (`.folio/conflicts/`): which are
/// still open (no later op settled them), their resolution as an op, and
/// their live observation. ``Store``'s conflict methods hand their calls
/// here.
struct ConflictRecords {
  let store: Store

  /// ``Store/conflicts(table:)``.
  func conflicts(table: String?) throws -> [Conflict] {
    let records = try records().filter { table == nil || $0.table == table }
    guard !records.isEmpty else { return [] }
    struct Loss: Hashable {
      var table: String
      var pk: String
      var path: FieldPath
      var loser: HLC
    }
    var losses: [Loss: [Conflict]] = [:]
    for record in records {
      losses[
        Loss(table: record.table, pk: record.pk, path: record.path, loser: record.losingStamp), default: []
      ]
      .append(record)
    }
    let documents = Set(records.map { OpHistory.DocumentKey(table: $0.table, pk: $0.pk) })
    var ops: [OpHistory.DocumentKey: [Op]] = [:]
    // Only the recorded documents' ops matter: the rest of the log is
    // passed over unparsed.
    for entry in try OpLog.allEntries(root: store.rootPath, pks: Set(records.map(\.pk))) {
      let key = OpHistory.DocumentKey(table: entry.op.table, pk: entry.op.pk)
      if documents.contains(key) { ops[key, default: []].append(entry.op) }
    }
    var open: [Conflict] = []
    for (loss, recorded) in losses {
      let winners = Set(recorded.map(\.winningStamp))
      let settled = (ops[.init(table: loss.table, pk: loss.pk)] ?? []).contains { op in
        guard loss.loser < op.hlc, !winners.contains(op.hlc) else { return false }
        if op.mutation.kind == .remove || op.fromTree { return true }
        return op.mutation.assignments.contains {
          $0.path.hasPrefix(loss.path) || loss.path.hasPrefix($0.path)
        }
      }
      if settled { continue }
      open.append(recorded.max { $0.winningStamp < $1.winningStamp }!)
    }
    return open.sorted {
      ($0.table, $0.pk, $0.path.description, $0.losingStamp) < (
        $1.table, $1.pk, $1.path.description, $1.losingStamp
      )
    }
  }

  /// Every record under `.folio/conflicts/`, open or settled, deduplicated.
  /// A file that is not a record, or a record about a table `folio.yaml`
  /// does not define, is skipped here and reported by `fsck`.
  func records() throws -> [Conflict] {
    let directory = store.rootPath + "/" + Conflict.folder
    var records = Set<Conflict>()
    for name in (try FileSystem.list(directory) ?? []).sorted() where name.hasSuffix(".json") {
      guard let bytes = try? FileSystem.read(directory + "/" + name),
        bytes.count <= Limits.maximumDocumentBytes,
        let record = try? Conflict.record(bytes: bytes, file: Conflict.folder + "/" + name),
        store.config.table(named: record.table) != nil
      else { continue }
      records.insert(record)
    }
    return Array(records)
  }

  /// ``Store/resolveConflict(table:pk:path:_:)``.
  func resolve(table: String, pk: String, path: FieldPath, _ resolution: Store.ConflictResolution) throws
    -> [UpdateResult]
  {
    let config = try store.table(named: table)
    let open = try conflicts(table: table).filter { $0.pk == pk && $0.path == path }
    guard let latest = open.max(by: { $0.winningStamp < $1.winningStamp }) else {
      throw FolioError(
        .notFound, "no open conflict at '\(path)' of document '\(pk)' in table '\(table)'", table: table,
        pk: pk)
    }
    let value: JSONValue?
    switch resolution {
    case .keep:
      value = latest.winningValue
    case .takeOther:
      let lost = Set(open.map(\.losingValue))
      guard lost.count == 1 else {
        throw FolioError(
          .conflict,
          "\(lost.count) different values were lost at '\(path)' of '\(pk)'; choose one with a value",
          table: table, pk: pk)
      }
      value = lost.first!
    case .value(let chosen):
      value = chosen
    }
    return try store.write { tx in
      try tx.record(
        Mutation(kind: .update, assignments: [.init(path: path, value: value)]), table: config, pk: pk)
    }
  }

  /// ``Store/observeConflicts(table:deliverOn:_:)``.
  func observe(
    table: String?, deliverOn queue: DispatchQueue,
    _ handler: @escaping @Sendable ([Conflict], ConflictListEvent) -> Void
  ) throws -> ConflictObservation {
    if let table { _ = try store.table(named: table) }
    let core = LiveQueryCore<[Conflict], ConflictListEvent>(
      deliverOn: queue, nextSignal: false,
      initialEvent: { ConflictListEvent(isInitial: true, opened: $0, closed: []) },
      changeEvent: { ConflictListEvent.change(from: $0, to: $1) },
      handler: { conflicts, event, _ in handler(conflicts, event) })
    // Watching before the first read, so no change in between is missed.
    // Each read and its hand-over happen under `serial`, so lists reach the
    // core in the order they were read, the initial one first. (A plain
    // lock: it orders work and guards no state.)
    let serial = NSLock()
    serial.lock()
    defer { serial.unlock() }
    let watcher = try ConflictWatcher(store: store) { [weak store] in
      serial.lock()
      defer { serial.unlock() }
      guard let store, let list = try? ConflictRecords(store: store).conflicts(table: table) else { return }
      core.update(list)
    }
    let observation = ConflictObservation(core: core, watcher: watcher)
    do {
      core.update(try conflicts(table: table))
    } catch {
      observation.stop()
      throw error
    }
    return observation
  }
}
