import FolioCore
import FolioJSON
import FolioSystem

/// Reads a store's past from git's objects and the op logs, without a
/// checkout: a document's versions and blame, the changes between two
/// versions of the store, and the store as a commit left it. ``Store``'s
/// `history`, `blame`, `diff` and `snapshot` hand their calls here.
struct HistoryReader {
  let store: Store

  /// ``Store/history(table:pk:)``.
  func history(table name: String, pk: String) throws -> [DocumentVersion] {
    let table = try store.table(named: name)
    let repository = try store.openRepository()
    guard let head = try repository.headCommit()?.id else { return [] }
    let path = (try table.path(of: pk))
    let walk = try PathHistory(repository: repository, head: head, paths: [path])
    let reader = TreeMerge(repository: repository, config: store.config)
    var parsed: [GitOID: JSONObject] = [:]
    func value(at step: Int) throws -> JSONObject? {
      guard let blob = try walk.blob(step, 0) else { return nil }
      if let known = parsed[blob] { return known }
      let object = try reader.document(
        blob, path: walk.steps[step].commit.description.prefix(12) + ":" + path)
      parsed[blob] = object
      return object
    }
    var versions: [DocumentVersion] = []
    for at in try walk.versions(of: 0).reversed() {
      let step = walk.steps[at]
      let new = try value(at: at)
      let old = try step.parents.first.flatMap { try value(at: $0) }
      versions.append(
        DocumentVersion(
          commit: try repository.commit(step.commit).info,
          document: new.map { Document(pk: pk, table: table.name, value: $0) },
          changes: DocumentChange.changes(table: table, pk: pk, old: old, new: new)))
    }
    return versions
  }

  /// ``Store/snapshot(asOf:)``.
  func snapshot(asOf revision: String) throws -> StoreSnapshot {
    let repository = try store.openRepository()
    let id = try repository.resolveCommit(revision)
    return try StoreSnapshot(store: store, repository: repository, commit: try repository.commit(id))
  }

  /// ``Store/diff(from:to:tables:)``.
  func diff(from: String?, to: String?, tables: [String]) throws -> StoreDiff {
    let repository = try store.openRepository()
    let selected = tables.isEmpty ? store.heldTables : try tables.map { try store.table(named: $0) }
    let head = try repository.headCommit()
    let oldTree =
      from == nil ? try head?.tree() : try repository.commit(try repository.resolveCommit(from!)).tree()
    let newTree =
      to == nil ? try head?.tree() : try repository.commit(try repository.resolveCommit(to!)).tree()
    // The working tree's documents that differ from HEAD: nil for deleted.
    var pending: [String: [String: JSONObject?]] = [:]
    var problems: [FolioError] = []
    if to == nil {
      let scan = try store.lock.withLock {
        store.recoverForReading()
        return try WorkTreeScan(store: store).scanPending(
          repository: repository, headTree: newTree, index: try repository.index())
      }
      for document in scan.documents {
        pending[document.table.name, default: [:]][document.pk] = document.document
      }
      problems = scan.problems
    }
    let reader = TreeMerge(repository: repository, config: store.config)
    var changes: [DocumentChange] = []
    for table in selected {
      let oldFolder = try oldTree?.subtree(at: table.path, repository: repository)
      let newFolder = try newTree?.subtree(at: table.path, repository: repository)
      // pk → blob ids on each side, for the documents git's diff names.
      var ids: [String: (old: GitOID?, new: GitOID?)] = [:]
      if let newFolder {
        for change in try repository.changes(from: oldFolder, to: newFolder) {
          guard let pk = table.pk(fromDocumentName: change.path) else { continue }
          ids[pk] = (change.old, change.new)
        }
      } else if let oldFolder {
        for (name, id) in try oldFolder.documentBlobs(in: "", layout: table.layout, repository: repository) {
          guard let pk = table.pk(fromDocumentName: name) else { continue }
          ids[pk] = (id, nil)
        }
      }
      let edited = pending[table.name] ?? [:]
      for pk in edited.keys where ids[pk] == nil {
        let name = try table.documentName(for: pk)
        ids[pk] = (oldFolder?.blobID(at: name), nil)
      }
      for pk in ids.keys.sorted() {
        let (oldID, newID) = ids[pk]!
        let path = (try table.path(of: pk))
        let old = try reader.document(oldID, path: path)
        let new: JSONObject? = try edited[pk] ?? reader.document(newID, path: path)
        changes += DocumentChange.changes(table: table, pk: pk, old: old, new: new)
      }
    }
    return StoreDiff(changes: changes, problems: problems)
  }

  /// ``Store/blame(table:pk:)``.
  func blame(table name: String, pk: String) throws -> DocumentBlame {
    let table = try store.table(named: name)
    guard let current = try store.collection(table.name).findByID(pk).exec() else {
      return DocumentBlame(table: table.name, pk: pk, fields: [])
    }
    let (all, logs) = try OpLog.allEntriesAndLogs(root: store.rootPath, pks: [pk])
    let entries = all.filter { $0.op.table == table.name && $0.op.pk.utf8Equals(pk) }
    let repository = try store.openRepository()
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
    let reader = TreeMerge(repository: repository, config: store.config)
    var introductions = try OpIntroductions(
      repository: repository, logs: logs, walk: walk, paths: paths, cacheDirectory: store.privateDirectory)
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
