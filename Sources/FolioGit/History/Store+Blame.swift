import FolioCore
import FolioJSON
import FolioSystem

extension Store {
  /// For each leaf of a document, the operation that last set it (its
  /// kind, stamp and replica) and the commit that brought that operation,
  /// with its author and date.
  ///
  /// Blame follows the op logs, not the text of commits: the document's
  /// ops from every replica's log are replayed in stamp order, as a merge
  /// replays them, so a value a replay merge produced is blamed on the op
  /// and replica that wrote it, not on the merge. A counter lists the
  /// increments since its last assignment, and a set who added each
  /// member. A value no op explains (edited and committed without Folio,
  /// or its ops compacted away) is blamed on the commit that made it, as
  /// ``BlameSource/Kind/edit``.
  ///
  /// The document is read as the working tree holds it, and ops not yet
  /// committed have no commit.
  ///
  /// ```swift
  /// for field in try store.blame(table: "todos", pk: "t1").fields {
  ///   print(field.path, field.source.kind, field.source.replica ?? "-", field.source.commit?.author ?? "-")
  /// }
  /// ```
  /// - Throws: `UNKNOWN_TABLE`; `INVALID_JSON` at `file:line:col` for an
  ///   unreadable document or op log line.
  public func blame(table name: String, pk: String) throws -> DocumentBlame {
    let table = try table(named: name)
    guard let current = try collection(table.name).findByID(pk).exec() else {
      return DocumentBlame(table: table.name, pk: pk, fields: [])
    }
    let (all, logs) = try OpLog.allEntriesAndLogs(root: rootPath, pks: [pk])
    let entries = all.filter { $0.op.table == table.name && $0.op.pk.utf8Equals(pk) }
    let repository = try openRepository()
    let documentPath = (try table.path(of: pk))
    let paths = [documentPath] + Set(entries.map(\.file)).sorted()
    let walk = try repository.headCommit().map {
      try PathHistory(repository: repository, head: $0.id, paths: paths)
    }
    var infos: [Int: CommitInfo] = [:]
    let info = { (step: Int) throws -> CommitInfo in
      if let known = infos[step] { return known }
      let made = try repository.commit(walk!.steps[step].commit).info
      infos[step] = made
      return made
    }
    let reader = TreeMerge(repository: repository, config: config)
    var introductions = try OpIntroductions(
      repository: repository, logs: logs, walk: walk, paths: paths, cacheDirectory: privateDirectory)
    let replay = BlameReplay(pk: pk, key: table.key)
    for (index, entry) in entries.enumerated() {
      let step = try introductions.step(of: entry)
      // Compacted logs start after the document's creation: the replay
      // starts from the document the first op found. (An insert or upsert
      // first needs no lookup in the table's folder, a large object: what
      // it did not write is not explained, and is found in the commits.)
      if index == 0, let step, !entry.op.fromTree, ![.insert, .upsert].contains(entry.op.mutation.kind),
        let parent = walk!.steps[step].parents.first, let before = try walk!.blob(parent, 0)
      {
        replay.seed(try reader.document(before, path: documentPath))
      }
      let kind = entry.op.fromTree ? .import : BlameSource.Kind(rawValue: entry.op.mutation.kind.rawValue)
      let source = BlameSource(kind: kind ?? .update, stamp: entry.op.hlc, commit: try step.map(info))
      // An import's op names no content; the commit that brought it has it.
      let imported =
        try entry.op.fromTree
        ? step.map { try reader.document(walk!.blob($0, 0), path: documentPath) } ?? current.value
        : nil
      replay.apply(entry.op, source: source, imported: imported)
    }
    let edits = EditSources(walk: walk, documentPath: documentPath, reader: reader, commitInfo: info)
    var fields: [FieldBlame] = []
    for (tokens, value) in Self.leaves(of: current.value) where !tokens.isEmpty {
      let explained = replay.document?.value(at: FieldPath(tokens)) == value
      let (node, assigned, atRoot) = replay.lookup(tokens)
      let opSource = explained ? node?.lastChange ?? assigned : nil
      var field = FieldBlame(
        path: JSONPointer(tokens).description, value: value,
        source: try opSource ?? edits.source(tokens, value))
      switch table.kind(of: tokens.joined(separator: ".")) {
      case .counter:
        field.increments = node?.increments ?? []
        // A counter no assignment reached started from nothing (0); the
        // document's creation names only its key.
        let base = node?.assigned ?? assigned
        field.assignment = atRoot && base?.kind != .import ? nil : base
      case .set:
        field.members = try (value.arrayValue ?? []).map { member in
          let known = node?.members[member] ?? (explained ? assigned : nil)
          return FieldBlame.Member(value: member, source: try known ?? edits.source(tokens, value))
        }
      case .register:
        break
      }
      fields.append(field)
    }
    return DocumentBlame(table: table.name, pk: pk, fields: fields)
  }

  /// The leaves of `object` with their paths, in key order: each value
  /// that is not a non-empty object.
  static func leaves(of object: JSONObject) -> [([String], JSONValue)] {
    var result: [([String], JSONValue)] = []
    func visit(_ value: JSONValue, _ tokens: [String]) {
      if case .object(let members) = value, !members.isEmpty {
        for key in members.keys.sorted(by: { $0.utf8Compare($1) < 0 }) {
          visit(members[key]!, tokens + [key])
        }
      } else {
        result.append((tokens, value))
      }
    }
    visit(.object(object), [])
    return result
  }
}
