import FolioCore
import FolioJSON
import FolioSystem

extension Store {
  /// How ``resolveConflict(table:pk:path:_:)`` settles a conflict.
  public enum ConflictResolution: Sendable, Hashable {
    /// Keep the value that won the merge.
    case keep
    /// Take the value the merge overwrote.
    case takeOther
    /// Set a new value (nil unsets the path).
    case value(JSONValue?)
  }

  /// The open conflicts: values that a concurrent assignment overwrote in a
  /// merge (see ``Conflict``) and that no op made since has settled. Each
  /// lists the winner in effect now. Every replica that holds the same
  /// commits lists the same conflicts.
  ///
  /// A record is open while every op on its document that is later than the
  /// lost value and touches its path is one of the concurrent winners the
  /// records name. Any other such op (a resolution, a later assignment,
  /// unset or remove, an import of the document) was made by a replica that
  /// had seen the lost value, so it settles the conflict.
  ///
  /// ```swift
  /// let open = try store.conflicts(table: "todos")
  /// ```
  /// - Parameter table: only this table's conflicts; nil for every table.
  /// - Returns: sorted by table, pk, path and the lost value's stamp.
  public func conflicts(table: String? = nil) throws -> [Conflict] {
    let records = try conflictRecords().filter { table == nil || $0.table == table }
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
    for entry in try OpLog.allEntries(root: rootPath, pks: Set(records.map(\.pk))) {
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
  func conflictRecords() throws -> [Conflict] {
    let directory = rootPath + "/" + Conflict.folder
    var records = Set<Conflict>()
    for name in (try FileSystem.list(directory) ?? []).sorted() where name.hasSuffix(".json") {
      guard let bytes = try? FileSystem.read(directory + "/" + name),
        bytes.count <= Limits.maximumDocumentBytes,
        let record = try? Conflict.record(bytes: bytes, file: Conflict.folder + "/" + name),
        config.table(named: record.table) != nil
      else { continue }
      records.insert(record)
    }
    return Array(records)
  }

  /// Settles the open conflicts at `path` of a document with a normal
  /// update: it syncs like any op, and since it comes after the merge it
  /// closes the records on every replica that receives it.
  ///
  /// ```swift
  /// try store.resolveConflict(table: "todos", pk: "a", path: "title", .takeOther)
  /// ```
  /// - Returns: what the update changed.
  /// - Throws: `NOT_FOUND` when no conflict is open there; `CONFLICT` for
  ///   `.takeOther` when several different values were lost there (choose
  ///   one with `.value`).
  @discardableResult
  public func resolveConflict(table: String, pk: String, path: FieldPath, _ resolution: ConflictResolution)
    throws -> [UpdateResult]
  {
    let config = try self.table(named: table)
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
    return try write { tx in
      try tx.record(
        Mutation(kind: .update, assignments: [.init(path: path, value: value)]), table: config, pk: pk)
    }
  }
}

extension DocumentCollection {
  /// This table's open conflicts (``Store/conflicts(table:)``).
  ///
  /// ```swift
  /// for conflict in try store.collection("todos").conflicts() { print(conflict.path) }
  /// ```
  public func conflicts() throws -> [Conflict] {
    try store.conflicts(table: name)
  }
}
