import FolioCore
import FolioJSON
import FolioSystem

/// Merges two commits the Folio way: git's own three-way tree merge for
/// everything, then every table document changed on both sides (or with ops
/// on both sides) is resolved by replay, op logs are merged as sets of
/// lines, and other conflicting files get git's line merge. Criss-cross
/// histories merge their bases first into a virtual base, as git's recursive
/// strategy does, so every replica resolves against the same base.
struct TreeMerge {
  let repository: GitRepository
  var config: Config
  /// The op logs read so far, shared with the clock check before the merge.
  var opLogs = OpLogCache()

  /// What a merge produced.
  struct Result {
    /// The merged tree.
    var tree: GitOID
    /// Documents resolved by replay.
    var resolved: [OpHistory.DocumentKey]
    /// The newest op stamp of theirs in logs ours does not hold (ours are
    /// behind the local clock already); nil when there is none.
    var latestStamp: HLC?
    /// Documents past the size limit, kept as this side has them.
    var oversized: [String] = []
  }

  /// Merges commit `theirs` into `ours`.
  /// - Throws: `UNSAFE_PATH` naming `theirs` and the path when its tree
  ///   brings a path Folio must not write (``TreePathValidator``);
  ///   `CONFLICT` naming files outside the tables that git's line merge
  ///   could not resolve; nothing is written then.
  func merge(ours: GitOID, theirs: GitOID) throws -> Result {
    try merge(ours: ours, theirs: theirs, validating: true)
  }

  /// ``merge(ours:theirs:)``; virtual merge bases are made of commits
  /// already in both histories, and are not validated again.
  private func merge(ours: GitOID, theirs: GitOID, validating: Bool) throws -> Result {
    let ourCommit = try repository.commit(ours)
    let theirCommit = try repository.commit(theirs)
    let base = try baseCommit(ours: ours, theirs: theirs)
    let baseTree = try base.map { try repository.commit($0).tree() }
    if validating {
      // Everything theirs holds that is not in our history is untrusted
      // input: what it changed since the merge base, a commit of ours
      // (every tree of our history was checked when it landed). Against
      // ours instead, a replica far ahead would have its own changes
      // read again at every sync.
      try TreePathValidator(repository: repository, config: config).validate(
        try theirCommit.tree(), of: theirs, against: try baseTree ?? ourCommit.tree())
    }
    let trees = (
      base: baseTree, ours: try ourCommit.tree(),
      theirs: try theirCommit.tree()
    )
    // A table renamed on one side (`folio tables rename`): the side that
    // has not seen it yet still writes in the old folder, under the old
    // name. Each tree is read with the folder at its new place, and each
    // op under the table's name now, so both sides' changes meet.
    let renames = try renames(in: [trees.ours, trees.theirs])
    if !renames.isEmpty {
      var renamed = self
      renamed.config = Self.config(config, renaming: renames)
      return try renamed.merge(
        base: try trees.base.map { try moving(renames, in: $0) }, baseCommit: base,
        ours: (try moving(renames, in: trees.ours), stamp(for: ourCommit)),
        theirs: (try moving(renames, in: trees.theirs), stamp(for: theirCommit)))
    }
    return try merge(
      base: trees.base, baseCommit: base, ours: (trees.ours, stamp(for: ourCommit)),
      theirs: (trees.theirs, stamp(for: theirCommit)))
  }

  /// The renames the `folio.yaml` of any of `trees` records; none for a
  /// tree whose file does not load (the merge reports that elsewhere).
  private func renames(in trees: [GitTree]) throws -> [TableRename] {
    var found: [TableRename] = config.renames
    for tree in trees {
      guard let id = tree.blobID(at: Config.fileName),
        let other = try? Config(bytes: try repository.blob(id), file: Config.fileName)
      else { continue }
      for rename in other.renames where !found.contains(rename) { found.append(rename) }
    }
    return found
  }

  /// `tree` with the folder of each renamed table moved from its old place
  /// to its new one, where the tree still has it at the old place only: a
  /// move of one tree entry, however many documents the folder holds.
  private func moving(_ renames: [TableRename], in tree: GitTree) throws -> GitTree {
    var changes: [(path: String, id: GitOID?, mode: UInt32)] = []
    for rename in renames where rename.oldPath != rename.newPath {
      guard let folder = try tree.subtree(at: rename.oldPath, repository: repository),
        try tree.subtree(at: rename.newPath, repository: repository) == nil
      else { continue }
      changes += [(rename.newPath, folder.id, 0o040000), (rename.oldPath, nil, 0)]
    }
    if changes.isEmpty { return tree }
    return try repository.tree(try repository.updatedTree(tree, setting: changes))
  }

  /// `config` with each table that still has a former name of `renames`
  /// given its new name and folder, as the renaming side's config has it.
  static func config(_ config: Config, renaming renames: [TableRename]) -> Config {
    var result = config
    for rename in renames {
      guard result.table(named: rename.newName) == nil,
        let index = result.tables.firstIndex(where: { $0.name == rename.oldName })
      else { continue }
      result.tables[index].name = rename.newName
      result.tables[index].path = rename.newPath
      result.tables[index].renamedFrom.append(rename.oldName)
    }
    return result
  }

  /// The tree to merge against: the merge base, or for criss-cross
  /// histories a virtual base made by merging the bases (sorted by id, so
  /// every replica builds the same one).
  func baseCommit(ours: GitOID, theirs: GitOID) throws -> GitOID? {
    let bases = try repository.mergeBases(ours, theirs)
    guard let first = bases.first else { return nil }
    var accumulated = first
    for next in bases.dropFirst() {
      let virtual = try merge(ours: accumulated, theirs: next, validating: false)
      accumulated = try repository.createCommit(
        tree: virtual.tree, parents: [accumulated, next], message: "folio: virtual merge base")
    }
    return accumulated
  }

  /// Resolves one table document by replay, as a merge of `ours` and
  /// `theirs` would: the merge driver's entry point.
  func resolveDocument(path: String, ours: GitOID, theirs: GitOID) throws -> JSONObject?? {
    guard let (table, pk) = documentAddress(path) else { return nil }
    let base = try baseCommit(ours: ours, theirs: theirs)
    let baseTree = try base.map { try repository.commit($0).tree() }
    let ourCommit = try repository.commit(ours)
    let theirCommit = try repository.commit(theirs)
    let ourTree = try ourCommit.tree()
    let theirTree = try theirCommit.tree()
    let context = try MergeContext(
      merge: self, base: baseTree, baseCommit: base, ours: (ourTree, stamp(for: ourCommit)),
      theirs: (theirTree, stamp(for: theirCommit)))
    return .some(
      try context.resolve(
        .init(table: table.name, pk: pk), path: path, table: table,
        ids: (baseTree?.blobID(at: path), ourTree.blobID(at: path), theirTree.blobID(at: path))))
  }

  /// The stamp of a synthetic op for a side: its commit time, with a replica
  /// name taken from the commit, the same on every replica.
  func stamp(for commit: GitCommit) -> HLC {
    HLC(
      wall: Int64(commit.timeMilliseconds), counter: 0,
      replica: "~" + String(commit.id.description.prefix(12)))
  }

  func merge(
    base: GitTree?, baseCommit: GitOID?, ours: (tree: GitTree, stamp: HLC),
    theirs: (tree: GitTree, stamp: HLC)
  ) throws -> Result {
    // A table converted on one side (`folio tables layout`): each tree is
    // read with the table's files where the merged layout has them, so
    // both sides' changes meet by path.
    if let relaid = try relaidOut(base: base, ours: ours.tree, theirs: theirs.tree) {
      return try relaid.merge.mergeInOneLayout(
        base: relaid.base, baseCommit: baseCommit, ours: (relaid.ours, ours.stamp),
        theirs: (relaid.theirs, theirs.stamp))
    }
    return try mergeInOneLayout(base: base, baseCommit: baseCommit, ours: ours, theirs: theirs)
  }

  /// When the trees' `folio.yaml` files disagree on a table's layout, the
  /// layout the merge gives it (the side that changed it wins), each tree
  /// with the table's files moved to it, and a merge whose config has it;
  /// nil when every tree has the layout of this merge's config.
  private func relaidOut(base: GitTree?, ours: GitTree, theirs: GitTree) throws -> (
    merge: TreeMerge, base: GitTree?, ours: GitTree, theirs: GitTree
  )? {
    func layouts(_ tree: GitTree?) -> [String: TableLayout] {
      guard let tree, let id = tree.blobID(at: Config.fileName),
        let other = try? Config(bytes: try repository.blob(id), file: Config.fileName)
      else { return [:] }
      return Dictionary(other.tables.map { ($0.name, $0.layout) }, uniquingKeysWith: { a, _ in a })
    }
    let found = (base: layouts(base), ours: layouts(ours), theirs: layouts(theirs))
    var merge = self
    var trees = (base: base, ours: ours, theirs: theirs)
    var changed = false
    for (index, table) in config.tables.enumerated() {
      let names = [table.name] + table.renamedFrom.reversed()
      func layout(_ layouts: [String: TableLayout]) -> TableLayout? {
        names.lazy.compactMap { layouts[$0] }.first
      }
      let (baseLayout, ourLayout, theirLayout) = (
        layout(found.base), layout(found.ours), layout(found.theirs)
      )
      let target =
        ourLayout == nil || ourLayout == baseLayout ? theirLayout ?? ourLayout ?? table.layout : ourLayout!
      func relaid(_ tree: GitTree?, _ layout: TableLayout?) throws -> GitTree? {
        guard let tree, let layout, layout != target else { return tree }
        changed = true
        return try repository.tree(
          try repository.relayingOut(tree, folder: table.path, from: layout, to: target))
      }
      trees.base = try relaid(trees.base, baseLayout)
      trees.ours = try relaid(trees.ours, ourLayout)!
      trees.theirs = try relaid(trees.theirs, theirLayout)!
      if table.layout != target {
        merge.config.tables[index].layout = target
        changed = true
      }
    }
    return changed ? (merge, trees.base, trees.ours, trees.theirs) : nil
  }

  /// The documents whose file changed on one side only, or on neither,
  /// that both sides recorded ops for: they still need replay. `handled`
  /// holds the paths already queued.
  private func documentsWithOpsOnBothSides(
    ourOps: [OpHistory.DocumentKey: [Op]], theirOps: [OpHistory.DocumentKey: [Op]], handled: Set<String>,
    trees: (base: GitTree?, ours: GitTree, theirs: GitTree)
  ) throws -> [MergeContext.Job] {
    // Listings of table folders, read once per tree: looking a path up in
    // a 100k-entry folder parses the whole folder each time.
    var listings: [String: [String: GitOID]] = [:]
    func blobID(_ tree: GitTree?, _ path: String) throws -> GitOID? {
      guard let tree else { return nil }
      let (directory, name) = FileSystem.split(path)
      let key = tree.id.description + ":" + directory
      if listings[key] == nil {
        listings[key] = Dictionary(
          try tree.blobs(in: directory, repository: repository).map { ($0.name, $0.id) },
          uniquingKeysWith: { a, _ in a })
      }
      return listings[key]![name]
    }
    var documents: [MergeContext.Job] = []
    for key in Set(ourOps.keys).intersection(theirOps.keys).sorted(by: OpHistory.DocumentKey.precedes) {
      guard let table = config.table(named: key.table),
        let path = try? table.path(of: key.pk)
      else { continue }
      if handled.contains(path) { continue }
      documents.append(
        .init(
          key: key, path: path, table: table,
          ids: (try blobID(trees.base, path), try blobID(trees.ours, path), try blobID(trees.theirs, path))))
    }
    return documents
  }

  /// Resolves `documents` by replay, in batches so that the blobs read
  /// ahead stay bounded: each merged document's blob goes into `updates`
  /// (none where it is ours already), its key into `resolved`.
  private func resolve(
    _ documents: [MergeContext.Job], context: MergeContext,
    updates: inout [String: (id: GitOID?, mode: UInt32)],
    resolved: inout [OpHistory.DocumentKey], oversized: inout [String]
  ) throws {
    for start in stride(from: 0, to: documents.count, by: Self.resolveBatch) {
      let batch = Array(documents[start..<min(start + Self.resolveBatch, documents.count)])
      for (job, outcome) in zip(batch, context.resolveAll(batch)) {
        let merged: JSONObject?
        do {
          merged = try outcome.get()
        } catch let error as FolioError where error.code == .tooLarge {
          // A document past the limit (an older build wrote it) is not
          // read: it stays as this side has it, and the merge goes on for
          // the rest. `folio rm` of it clears it everywhere.
          oversized.append(job.path)
          continue
        }
        let id = try merged.map { try repository.writeBlob(JSONValue.object($0).canonicalBytes()) }
        if id != job.ids.1 { updates[job.path] = (id, 0) } else { updates[job.path] = nil }
        resolved.append(job.key)
      }
    }
  }

  private func mergeInOneLayout(
    base: GitTree?, baseCommit: GitOID?, ours: (tree: GitTree, stamp: HLC),
    theirs: (tree: GitTree, stamp: HLC)
  ) throws -> Result {
    // The merge is computed from the two sides' changes since the base, and
    // written as ours plus what theirs brings. git's own tree merge would
    // build an index of every file (100k entries for a 100k-document
    // table), for what is a set of changes.
    let ourChanges = Dictionary(
      try repository.fileChanges(from: base, to: ours.tree).map { ($0.path, $0) },
      uniquingKeysWith: { a, _ in a })
    let theirChanges = try repository.fileChanges(from: base, to: theirs.tree)
    let context = try MergeContext(
      merge: self, base: base, baseCommit: baseCommit, ours: ours, theirs: theirs)
    let ourOps = context.ourOps
    let theirOps = context.theirOps
    var resolved: [OpHistory.DocumentKey] = []
    var oversized: [String] = []
    var handled = Set<String>()
    var conflicts: [String] = []
    // Path → new blob id (nil: removed) and mode, over ours.
    var updates: [String: (id: GitOID?, mode: UInt32)] = [:]

    // Documents to resolve by replay, in the order met; resolved together
    // (on two threads when there are many) once both sides are read.
    var documents: [MergeContext.Job] = []

    for change in theirChanges {
      let path = change.path
      guard let our = ourChanges[path] else {
        updates[path] = (change.new, change.newMode)  // theirs alone changed it
        continue
      }
      if our.new == change.new && our.newMode == change.newMode { continue }  // the same change
      handled.insert(path)
      let (baseID, ourID, theirID) = (change.old, our.new, change.new)
      if Self.opLogName(path) != nil {
        let merged = OpLogMerge.merge(
          base: try baseID.map { try repository.blob($0) } ?? [],
          ours: try ourID.map { try repository.blob($0) } ?? [],
          theirs: try theirID.map { try repository.blob($0) } ?? [])
        updates[path] = (try repository.writeBlob(merged), 0)
      } else if let (table, pk) = documentAddress(path) {
        documents.append(
          .init(
            key: .init(table: table.name, pk: pk), path: path, table: table, ids: (baseID, ourID, theirID)))
      } else if let ourID, let theirID {
        let merged = try repository.mergeFile(path: path, base: baseID, ours: ourID, theirs: theirID)
        if merged.clean {
          updates[path] = (try repository.writeBlob(merged.bytes), our.newMode)
        } else {
          conflicts.append(path)
        }
      } else {
        conflicts.append(path)
      }
    }
    documents += try documentsWithOpsOnBothSides(
      ourOps: ourOps, theirOps: theirOps, handled: handled, trees: (base, ours.tree, theirs.tree))
    try resolve(documents, context: context, updates: &updates, resolved: &resolved, oversized: &oversized)
    if !conflicts.isEmpty {
      throw FolioError(
        .conflict,
        "git could not merge \(conflicts.joined(separator: ", ")) (outside Folio's tables); merge them by hand with 'git merge', then sync again",
        remedy: .syncAgain)
    }
    // Conflict records are immutable files named by their content: equal
    // on every replica that meets the same pair (see Conflict).
    for conflict in context.conflicts {
      let bytes = conflict.recordBytes
      updates[Conflict.recordPath(for: bytes)] = (try repository.writeBlob(bytes), 0)
    }
    // Our own stamps are behind our clock; only theirs can move it.
    let latest = try context.theirHistory.latestStamp(excluding: context.ourHistory.blobIDs)
    let tree =
      updates.isEmpty
      ? ours.tree.id
      : try repository.updatedTree(
        ours.tree, setting: updates.sorted { $0.key < $1.key }.map { ($0.key, $0.value.id, $0.value.mode) })
    return Result(tree: tree, resolved: resolved, latestStamp: latest, oversized: oversized)
  }

  func document(_ id: GitOID?, path: String) throws -> JSONObject? {
    try Self.document(bytes: try id.map { try repository.blob($0) }, path: path)
  }

  /// The document a blob's `bytes` hold (nil for no blob).
  /// - Throws: `TOO_LARGE` past the document size limit,
  ///   `INVALID_DOCUMENT` for anything but a JSON object.
  static func document(bytes: [UInt8]?, path: String) throws -> JSONObject? {
    guard let bytes else { return nil }
    try Limits.check(bytes.count, limit: Limits.maximumDocumentBytes, what: "the document", path: path)
    let value = try JSONValue(parsing: bytes, file: path)
    guard case .object(let object) = value else {
      throw FolioError(
        .invalidDocument, "a document must be a JSON object, not \(value.kindName)", path: path)
    }
    return object
  }

  /// How many documents a merge resolves at a time: a bound on the blobs
  /// it reads ahead (see ``MergeContext/resolveAll(_:)``).
  static let resolveBatch = 4096

  /// The table and pk of a document path, or nil if `path` is not one.
  func documentAddress(_ path: String) -> (TableConfig, String)? {
    config.document(atPath: path)
  }

  /// The file name of an op log path, or nil if `path` is not one.
  static func opLogName(_ path: String) -> String? {
    let prefix = Store.opsFolder + "/"
    guard path.hasPrefix(prefix), path.hasSuffix(".ndjson") else { return nil }
    let name = String(path.dropFirst(prefix.count))
    return name.contains("/") ? nil : name
  }
}
