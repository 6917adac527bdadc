internal import Clibgit2
import FolioCore
import FolioJSON
import FolioSystem
import Glibc

/// One ``WorkTreeScan/scanPending(repository:headTree:index:plan:)`` under way:
/// compares the working tree's Folio files with HEAD, table by table, and
/// gathers what differs in ``scan``. Stat data from git's index decides
/// which files to read; only those are hashed.
final class PendingScanner {
  let store: Store
  let repository: GitRepository
  let headTree: GitTree?
  let plan: ScanPlan?
  /// Loads libgit2's index, once, for a table the plan does not cover.
  private let loadIndex: () throws -> GitIndex
  private var loaded: GitIndex?
  /// What the scan found so far.
  private(set) var scan: PendingScan

  init(
    store: Store, repository: GitRepository, headTree: GitTree?, plan: ScanPlan?,
    loadIndex: @escaping () throws -> GitIndex, scan: PendingScan
  ) {
    self.store = store
    self.repository = repository
    self.headTree = headTree
    self.plan = plan
    self.loadIndex = loadIndex
    self.scan = scan
  }

  func libgit2Index() throws -> GitIndex {
    if let loaded { return loaded }
    let index = try loadIndex()
    loaded = index
    return index
  }

  /// The index's stage-0 entry at `path`: its blob, whether it is
  /// skip-worktree, and whether a file's stat data matches it.
  func indexEntry(_ path: String) throws -> (id: GitOID, skipWorktree: Bool, matches: (stat) -> Bool)? {
    if let file = plan?.indexFile {
      return file.rawEntry(at: path).map { entry in
        // The entry points into the file's mapping: the closure keeps it.
        (entry.id, entry.skipWorktree, { st in withExtendedLifetime(file) { entry.matches(st) } })
      }
    }
    return try libgit2Index().entry(at: path).map { entry in
      (entry.id, entry.skipWorktree, { WorkTreeScan.statMatches(entry, $0) })
    }
  }

  /// The file's bytes when it differs from `headID`; nil when it is the
  /// same. `hashing` skips the stat shortcut: a file the journal named
  /// may have been saved again within the stat data's granularity.
  func changedBytes(_ path: String, headID: GitOID?, hashing: Bool = false) throws -> [UInt8]?? {
    let absolute = store.rootPath + "/" + path
    var st = stat()
    guard lstat(absolute, &st) == 0 else { return .some(nil) }  // deleted
    // A file new since HEAD has no entry worth looking up.
    let statMatches =
      try headID.flatMap { headID in try indexEntry(path).map { $0.id == headID && $0.matches(st) } }
      ?? false
    if !hashing, statMatches { return nil }
    guard let bytes = try FileSystem.read(absolute) else { return .some(nil) }
    let id = try GitRepository.hashBlob(bytes)
    if id == headID {
      // Hashed only because the journal named it (a checkout's own
      // write, a save of the same bytes): an entry whose stat data still
      // matches needs no rewrite of the index.
      if !statMatches { scan.refresh.append((path, id)) }
      return nil
    }
    return .some(bytes)
  }

  /// Looks at the document file `name` of `table`, which exists.
  func examineFile(_ table: TableConfig, name: String, pk: String, headID: GitOID?, hashing: Bool) throws {
    let path = table.path + "/" + name
    // A link is reported (UNSAFE_PATH) and never read through.
    guard let change = try changedBytes(path, headID: headID, hashing: hashing), let bytes = change else {
      return
    }
    // An edit past the size limit is reported and not recorded, as
    // `folio watch` does: another replica's merge could not read it.
    if let problem = store.config.sizeProblem(bytes.count, table: table, path: path) { throw problem }
    let object = try WorkTreeScan(store: store).parseEditedDocument(bytes, table: table, pk: pk, path: path)
    let key = OpHistory.DocumentKey(table: table.name, pk: pk)
    let expected = try WorkTreeScan(store: store).knownDocument(
      table: table, pk: pk, path: path, headBlob: headID, ownOps: scan.ownOps[key] ?? [],
      repository: repository)
    var pending = PendingDocument(table: table, pk: pk, path: path, bytes: bytes, document: object)
    // An import's compact op says "the file is the content" (Op.fromTree).
    let fromTree = scan.ownOps[key]?.contains(where: \.fromTree) ?? false
    if expected == nil && headID == nil && !fromTree {
      // A new file: its body goes into the commit anyway, so the log
      // records only that it was inserted, and merges read the body
      // from the tree.
      pending.synthetic = Mutation(kind: .insert)
      pending.syntheticFromTree = true
    } else if !fromTree && !DocumentResolver.same(expected, object) {
      pending.synthetic = Mutation.diff(from: expected, to: object, kinds: table.kind(of:))
    }
    scan.documents.append(pending)
    scan.changedNames[table.name, default: []].append(name)
  }

  /// Looks at the document `name` of `table`, whose file is gone: a
  /// delete, unless it is evicted or was never committed nor written.
  func examineMissing(_ table: TableConfig, name: String, pk: String, headID: GitOID?) throws {
    let path = table.path + "/" + name
    if headID != nil, scan.evictedByTable[table.name]?.contains(ExactKey(pk)) == true {
      if let entry = try indexEntry(path), entry.skipWorktree { return }
      scan.evicted.append((path, headID!))
      return
    }
    let ownOps = scan.ownOps[OpHistory.DocumentKey(table: table.name, pk: pk)] ?? []
    // Not committed, and not written through Folio since: nothing to do.
    if headID == nil && ownOps.isEmpty { return }
    if headID == nil && scan.evictedByTable[table.name]?.contains(ExactKey(pk)) == true { return }
    let expected = try WorkTreeScan(store: store).knownDocument(
      table: table, pk: pk, path: path, headBlob: headID, ownOps: ownOps, repository: repository)
    // Made through Folio since HEAD, then deleted by hand: a remove.
    if headID == nil && expected == nil { return }
    var pending = PendingDocument(table: table, pk: pk, path: path, bytes: nil, document: nil)
    if expected != nil { pending.synthetic = Mutation(kind: .remove) }
    scan.documents.append(pending)
    scan.changedNames[table.name, default: []].append(name)
  }

  func examine(
    _ table: TableConfig, name: String, pk: String, headID: GitOID?, exists: Bool, hashing: Bool = false
  ) {
    do {
      if exists {
        try examineFile(table, name: name, pk: pk, headID: headID, hashing: hashing)
      } else {
        try examineMissing(table, name: name, pk: pk, headID: headID)
      }
    } catch let error as FolioError {
      scan.problems.append(error)
      scan.leftOut[table.name, default: []].append(name)
    } catch {
      scan.problems.append(FolioError(.io, "\(error)", path: store.rootPath + "/" + table.path + "/" + name))
      scan.leftOut[table.name, default: []].append(name)
    }
  }

  /// Looks at the documents of `table` that may differ from HEAD: the
  /// plan's candidates, or, without a plan for it, every file of a folder
  /// that does not match HEAD as a whole.
  func scanTable(_ table: TableConfig) throws {
    if let candidates = plan?.candidates[table.name], let file = plan?.indexFile {
      // Only these can differ from HEAD, and git's index holds HEAD.
      var names = candidates
      for key in scan.ownOps.keys where key.table == table.name {
        if let name = try? table.documentName(for: key.pk) { names.insert(name) }
      }
      for name in names.sorted() {
        guard let pk = table.pk(fromDocumentName: name) else { continue }
        let path = table.path + "/" + name
        let headID = file.rawEntry(at: path).map(\.id)
        var st = stat()
        let exists = lstat(store.rootPath + "/" + path, &st) == 0
        examine(table, name: name, pk: pk, headID: headID, exists: exists, hashing: true)
      }
      return
    }
    // Most folders are as committed: that is decided cheaply, and only
    // documents Folio wrote since HEAD are left to look at.
    let unchanged = try WorkTreeScan(store: store).folderMatchesHead(
      table, headTree: headTree, index: try libgit2Index(), repository: repository,
      evicted: scan.evictedByTable[table.name] ?? [])
    var headBlobs: [String: GitOID] = [:]
    var names: [String] = []
    if !unchanged {
      headBlobs = Dictionary(
        (try headTree?.documentBlobs(of: table, repository: repository) ?? []).map { ($0.name, $0.id) },
        uniquingKeysWith: { a, _ in a })
      names = try table.listDocumentNames(in: store.directory(of: table)) ?? []
    }
    var present = Set<String>()
    for name in names {
      guard let pk = table.pk(fromDocumentName: name) else { continue }
      present.insert(name)
      examine(table, name: name, pk: pk, headID: headBlobs[name], exists: true)
    }
    for (name, id) in headBlobs where !present.contains(name) && name.hasSuffix(".json") {
      guard let pk = table.pk(fromDocumentName: name) else { continue }
      examine(table, name: name, pk: pk, headID: id, exists: false)
    }
    // Made through Folio since HEAD, then deleted by hand: a remove.
    for key in scan.ownOps.keys where key.table == table.name {
      guard let name = try? table.documentName(for: key.pk),
        unchanged
          ? try libgit2Index().entry(at: table.path + "/" + name) == nil
          : !present.contains(name) && headBlobs[name] == nil
      else { continue }
      examine(table, name: name, pk: key.pk, headID: nil, exists: false)
    }
  }

  /// Looks at Folio's other committed files: `folio.yaml`,
  /// `.gitattributes`, the schema files and the op logs.
  func scanOtherFiles() throws {
    // The schema files folio.yaml names travel with it: a clone without
    // them could not check a write.
    var others = [Config.fileName, ".gitattributes"] + store.config.tables.compactMap(\.schemaFile)
    let logNames = Set(
      (try FileSystem.list(store.rootPath + "/" + Store.opsFolder) ?? []).filter { $0.hasSuffix(".ndjson") }
        + (try headTree?.blobs(in: Store.opsFolder, repository: repository) ?? []).map(\.name))
    others += logNames.sorted().map { Store.opsFolder + "/" + $0 }
    let ownLogPath = Store.opsFolder + "/" + store.opLogName
    for path in others {
      let headID = headTree?.blobID(at: path)
      // The log as committed, grown by the ops just read: no need to hash
      // it to know whether it changed.
      var st = stat()
      if path == ownLogPath, let known = plan?.ownLog, headID?.description == known.blob,
        lstat(store.opLogPath, &st) == 0, UInt64(st.st_ino) == known.inode,
        Int(st.st_size) == known.size || !scan.ownOps.isEmpty
      {
        if !scan.ownOps.isEmpty { scan.files.append((path, try FileSystem.read(store.opLogPath))) }
        continue
      }
      if let change = try changedBytes(path, headID: headID) {
        // Nothing, or a log segment just started and still empty.
        if headID == nil && change?.isEmpty ?? true { continue }
        scan.files.append((path, change))
      }
    }
  }
}
