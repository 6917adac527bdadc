internal import Clibgit2
import FolioCore
import FolioSystem
import Foundation
import Glibc

extension GitRepository {
  /// The working tree, without a trailing slash.
  var workTree: String? {
    guard let pointer = git_repository_workdir(handle) else { return nil }
    var path = String(cString: pointer)
    while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
    return path
  }

  /// The commit HEAD points at, or nil on an unborn branch.
  package func headCommit() throws -> GitCommit? {
    var oid = git_oid()
    let rc = git_reference_name_to_id(&oid, handle, "HEAD")
    if rc == GIT_ENOTFOUND.rawValue || rc == GIT_EUNBORNBRANCH.rawValue { return nil }
    try LibGit2.check(rc, "git_reference_name_to_id")
    return try commit(GitOID(oid))
  }

  /// Where `git pull` (or `merge`, `reset`) left the branch before it
  /// moved: `ORIG_HEAD`, when it names a commit this repository has and
  /// that is not `head`.
  func origHead(other head: GitOID) throws -> GitOID? {
    guard let bytes = try FileSystem.read(gitDirectory + "/ORIG_HEAD"),
      let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first,
      let orig = GitOID(hex: String(line)), orig != head, (try? commit(orig)) != nil
    else { return nil }
    return orig
  }

  /// The full name of the branch HEAD points at (e.g. `refs/heads/main`).
  package func headBranch() throws -> String {
    var reference: OpaquePointer?
    try LibGit2.check(git_reference_lookup(&reference, handle, "HEAD"), "git_reference_lookup")
    defer { git_reference_free(reference) }
    if git_reference_type(reference) == GIT_REFERENCE_SYMBOLIC,
      let target = git_reference_symbolic_target(reference)
    {
      return String(cString: target)
    }
    throw FolioError(.git, "HEAD is detached; check out a branch first (git switch main)")
  }

  /// The id a reference points at, or nil if there is no such reference.
  func referenceID(_ name: String) throws -> GitOID? {
    var oid = git_oid()
    let rc = git_reference_name_to_id(&oid, handle, name)
    if rc == GIT_ENOTFOUND.rawValue { return nil }
    try LibGit2.check(rc, "git_reference_name_to_id", path: name)
    return GitOID(oid)
  }

  /// Points reference `name` at `id`, creating it if needed.
  package func setReference(_ name: String, to id: GitOID, message: String) throws {
    var oid = id.raw
    var reference: OpaquePointer?
    try GitRefLocks.writing(gitDirectory: gitDirectory) {
      try LibGit2.check(
        git_reference_create(&reference, handle, name, &oid, 1, message), "git_reference_create", path: name)
    }
    git_reference_free(reference)
  }

  func commit(_ id: GitOID) throws -> GitCommit {
    var oid = id.raw
    var commit: OpaquePointer?
    try LibGit2.check(git_commit_lookup(&commit, handle, &oid), "git_commit_lookup")
    return GitCommit(handle: commit!)
  }

  package func tree(_ id: GitOID) throws -> GitTree {
    var oid = id.raw
    var tree: OpaquePointer?
    try LibGit2.check(git_tree_lookup(&tree, handle, &oid), "git_tree_lookup")
    return GitTree(handle: tree!)
  }

  /// The bytes of blob `id`.
  ///
  /// In a partial clone, a blob that is not stored here is fetched from
  /// the remote that left it out, as git fetches one (an older version of
  /// a held table's document, which `history` or `--as-of` reads).
  package func blob(_ id: GitOID) throws -> [UInt8] {
    var oid = id.raw
    var blob: OpaquePointer?
    var rc = git_blob_lookup(&blob, handle, &oid)
    if rc == GIT_ENOTFOUND.rawValue, isPartialClone(of: "origin") {
      // folio.yaml's key is the store's to know; the process's is here.
      let key = SyncConfig().sshKeyPath(root: "/", settings: FolioSettings.current)
      try fetchMissing([id], remote: "origin", sshKey: key)
      rc = git_blob_lookup(&blob, handle, &oid)
    }
    try LibGit2.check(rc, "git_blob_lookup")
    defer { git_blob_free(blob) }
    let size = Int(git_blob_rawsize(blob))
    guard size > 0, let raw = git_blob_rawcontent(blob) else { return [] }
    return Array(UnsafeRawBufferPointer(start: raw, count: size))
  }

  /// Stores `bytes` as a blob and returns its id.
  func writeBlob(_ bytes: [UInt8]) throws -> GitOID {
    if let collector {
      // libgit2's write rescans the pack folder (a directory read and a
      // stat per pack) for every object it does not find, which costs more
      // than the write itself when a merge or commit makes thousands.
      let id = try Self.hashBlob(bytes)
      if try !containsWithoutRescan(id) { collector.add(id, .init(type: GIT_OBJECT_BLOB, bytes: bytes)) }
      return id
    }
    var oid = git_oid()
    try bytes.withUnsafeBytes { raw in
      try LibGit2.check(
        git_blob_create_from_buffer(&oid, handle, raw.baseAddress, raw.count), "git_blob_create_from_buffer")
    }
    return GitOID(oid)
  }

  /// Whether the object database holds `id`, as its packs and loose
  /// objects were when last scanned (for a partial clone: here, not only
  /// on the remote). Never fetches.
  func containsWithoutRescan(_ id: GitOID) throws -> Bool {
    var odb: OpaquePointer?
    try LibGit2.check(git_repository_odb(&odb, handle), "git_repository_odb")
    defer { git_odb_free(odb) }
    var oid = id.raw
    return git_odb_exists_ext(odb, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 1
  }

  /// The blob id `bytes` would get, without storing them.
  package static func hashBlob(_ bytes: [UInt8]) throws -> GitOID {
    var oid = git_oid()
    try bytes.withUnsafeBytes { raw in
      try LibGit2.check(git_odb_hash(&oid, raw.baseAddress, raw.count, GIT_OBJECT_BLOB), "git_odb_hash")
    }
    return GitOID(oid)
  }

  /// The repository's own index (the staging area).
  package func index() throws -> GitIndex {
    // libgit2 cannot read a split index, which Folio and git may write.
    try GitIndexFile.unsplitIfNeeded(gitDirectory: gitDirectory)
    var index: OpaquePointer?
    try LibGit2.check(git_repository_index(&index, handle), "git_repository_index")
    return GitIndex(handle: index!)
  }

  /// The author/committer: from git config, else a Folio default, so that a
  /// fresh machine without `user.name` can still commit.
  private func signature() throws -> UnsafeMutablePointer<git_signature> {
    var signature: UnsafeMutablePointer<git_signature>?
    if git_signature_default(&signature, handle) == 0, let signature { return signature }
    try LibGit2.check(git_signature_now(&signature, "Folio", "folio@localhost"), "git_signature_now")
    return signature!
  }

  /// Writes a commit of `tree` with `parents`, without moving any reference.
  package func createCommit(tree: GitOID, parents: [GitOID], message: String) throws -> GitOID {
    let treeObject = try self.tree(tree)
    let parentObjects = try parents.map { try commit($0) }
    let signature = try self.signature()
    defer { git_signature_free(signature) }
    var oid = git_oid()
    var parentPointers: [OpaquePointer?] = parentObjects.map { $0.handle }
    try parentPointers.withUnsafeMutableBufferPointer { buffer in
      try LibGit2.check(
        git_commit_create(
          &oid, handle, nil, signature, signature, nil, message, treeObject.handle, buffer.count,
          buffer.baseAddress),
        "git_commit_create")
    }
    return GitOID(oid)
  }

  /// Every best common ancestor of `one` and `two` (several for criss-cross
  /// histories), sorted by id so every replica picks the same order.
  func mergeBases(_ one: GitOID, _ two: GitOID) throws -> [GitOID] {
    var array = git_oidarray()
    var a = one.raw
    var b = two.raw
    let rc = git_merge_bases(&array, handle, &a, &b)
    if rc == GIT_ENOTFOUND.rawValue { return [] }
    try LibGit2.check(rc, "git_merge_bases")
    defer { git_oidarray_dispose(&array) }
    return (0..<array.count).map { GitOID(array.ids[$0]) }.sorted { $0.description < $1.description }
  }

  /// Whether `commit` has `ancestor` in its history (or is it).
  func isDescendant(_ commit: GitOID, of ancestor: GitOID) throws -> Bool {
    if commit == ancestor { return true }
    var a = commit.raw
    var b = ancestor.raw
    let rc = git_graph_descendant_of(handle, &a, &b)
    try LibGit2.check(rc, "git_graph_descendant_of")
    return rc == 1
  }

  /// A line-based three-way merge of three blobs, as `git merge-file` does.
  /// - Returns: the merged bytes, and whether they are clean (no markers).
  func mergeFile(path: String, base: GitOID?, ours: GitOID, theirs: GitOID) throws -> (
    bytes: [UInt8], clean: Bool
  ) {
    func input(_ id: GitOID?) throws -> [UInt8] { try id.map { try blob($0) } ?? [] }
    let (b, o, t) = (try input(base), try input(ours), try input(theirs))
    var result = git_merge_file_result()
    let rc = b.withUnsafeBufferPointer { bb in
      o.withUnsafeBufferPointer { ob in
        t.withUnsafeBufferPointer { tb in
          path.withCString { cPath in
            var bi = git_merge_file_input(
              version: UInt32(GIT_MERGE_FILE_INPUT_VERSION),
              ptr: bb.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
              size: bb.count, path: cPath, mode: 0o100644)
            var oi = git_merge_file_input(
              version: UInt32(GIT_MERGE_FILE_INPUT_VERSION),
              ptr: ob.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
              size: ob.count, path: cPath, mode: 0o100644)
            var ti = git_merge_file_input(
              version: UInt32(GIT_MERGE_FILE_INPUT_VERSION),
              ptr: tb.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
              size: tb.count, path: cPath, mode: 0o100644)
            return git_merge_file(&result, &bi, &oi, &ti, nil)
          }
        }
      }
    }
    try LibGit2.check(rc, "git_merge_file", path: path)
    defer { git_merge_file_result_free(&result) }
    let bytes =
      result.ptr.map { Array(UnsafeRawBufferPointer(start: UnsafeRawPointer($0), count: result.len)) } ?? []
    return (bytes, result.automergeable != 0)
  }

  /// Makes the working tree and index match `tree`, starting from what HEAD
  /// holds. Safe mode: a file someone changed since is never overwritten; the
  /// paths in the way are returned instead and nothing is written.
  /// `force` writes every file of `tree` (a fresh clone's empty working
  /// tree, whose HEAD already names the commit); `paths`, when given, are
  /// the only files written and put in the index (a partial clone's).
  ///
  /// Files are written as their blobs hold them, with no end-of-line or
  /// `ident` filters, as Folio's own checkout in a sync writes them; it
  /// also spares an attributes lookup per file.
  func checkout(tree: GitTree, paths: [String]? = nil, force: Bool = false) throws -> [String] {
    var options = git_checkout_options()
    try LibGit2.check(
      git_checkout_options_init(&options, UInt32(GIT_CHECKOUT_OPTIONS_VERSION)), "git_checkout_options_init")
    options.disable_filters = 1
    options.checkout_strategy = force ? GIT_CHECKOUT_FORCE.rawValue : GIT_CHECKOUT_SAFE.rawValue
    final class Conflicts { var paths: [String] = [] }
    let conflicts = Conflicts()
    options.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT.rawValue
    options.notify_cb = { _, path, _, _, _, payload in
      if let path, let payload {
        Unmanaged<Conflicts>.fromOpaque(payload).takeUnretainedValue().paths.append(String(cString: path))
      }
      return 0
    }
    options.notify_payload = Unmanaged.passUnretained(conflicts).toOpaque()
    // Exact paths, not patterns: a document's name may hold `*` or `?`.
    var strings: [UnsafeMutablePointer<CChar>?] = (paths ?? []).map { strdup($0) }
    defer { for string in strings { free(string) } }
    if paths != nil {
      options.checkout_strategy |= GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH.rawValue
    }
    // libgit2's checkout reads the index, and cannot read a split one.
    try GitIndexFile.unsplitIfNeeded(gitDirectory: gitDirectory)
    let rc = strings.withUnsafeMutableBufferPointer { buffer in
      if paths != nil { options.paths = git_strarray(strings: buffer.baseAddress, count: buffer.count) }
      return withExtendedLifetime(conflicts) { git_checkout_tree(handle, tree.handle, &options) }
    }
    if rc == GIT_ECONFLICT.rawValue || (rc < 0 && !conflicts.paths.isEmpty) {
      return conflicts.paths.sorted()
    }
    try LibGit2.check(rc, "git_checkout_tree")
    return []
  }

  /// The names of the references that start with `prefix`.
  func references(prefix: String) throws -> [String] {
    var array = git_strarray()
    try LibGit2.check(git_reference_list(&array, handle), "git_reference_list")
    defer { git_strarray_dispose(&array) }
    return (0..<array.count).compactMap { array.strings[$0].map { String(cString: $0) } }
      .filter { $0.hasPrefix(prefix) }.sorted()
  }

  /// Points HEAD at branch `name` (a full `refs/heads/…` name).
  func setHead(_ name: String) throws {
    try GitRefLocks.writing(gitDirectory: gitDirectory) {
      try LibGit2.check(git_repository_set_head(handle, name), "git_repository_set_head", path: name)
    }
  }

  /// The blobs that differ between two trees: path, old id and new id (nil
  /// where the path is absent).
  func changes(from old: GitTree?, to new: GitTree) throws -> [(path: String, old: GitOID?, new: GitOID?)] {
    try fileChanges(from: old, to: new).map { ($0.path, $0.old, $0.new) }
  }

  /// One file that differs between two trees.
  struct FileChange {
    var path: String
    /// The id before, nil where the file was added.
    var old: GitOID?
    /// The id after, nil where the file was removed.
    var new: GitOID?
    /// The file mode after (`0o100644`, `0o100755`, `0o120000`,
    /// `0o160000`).
    var newMode: UInt32
    /// The file mode before.
    var oldMode: UInt32 = 0
  }

  /// The files that differ between two trees, with their modes, in path
  /// order. Renames are not looked for: a moved file is a removal and an
  /// addition.
  ///
  /// Both trees are walked side by side in git's order, and a folder whose
  /// tree id is the same on both sides is passed over unread: a change of
  /// ten documents in a hashed table of 300,000 reads the trees on the ten
  /// paths, where libgit2's diff reads every tree of both sides.
  func fileChanges(from old: GitTree?, to new: GitTree) throws -> [FileChange] {
    var result: [FileChange] = []
    try fileChanges(from: old, to: new, prefix: "", into: &result)
    return result
  }

  private func fileChanges(
    from old: GitTree?, to new: GitTree?, prefix: String, into result: inout [FileChange]
  )
    throws
  {
    let oldCount = old.map { git_tree_entrycount($0.handle) } ?? 0
    let newCount = new.map { git_tree_entrycount($0.handle) } ?? 0
    var i = 0
    var j = 0
    while i < oldCount || j < newCount {
      let o = i < oldCount ? git_tree_entry_byindex(old!.handle, i) : nil
      let n = j < newCount ? git_tree_entry_byindex(new!.handle, j) : nil
      let order: Int32
      if let o, let n {
        order = Self.treeOrder(o, n)
      } else {
        order = o == nil ? 1 : -1
      }
      if order == 0, let o, let n {
        i += 1
        j += 1
        let oldMode = UInt32(git_tree_entry_filemode_raw(o).rawValue)
        let newMode = UInt32(git_tree_entry_filemode_raw(n).rawValue)
        if oldMode == newMode && git_oid_equal(git_tree_entry_id(o), git_tree_entry_id(n)) != 0 { continue }
        let path = prefix + String(cString: git_tree_entry_name(n))
        switch (git_tree_entry_type(o) == GIT_OBJECT_TREE, git_tree_entry_type(n) == GIT_OBJECT_TREE) {
        case (true, true):
          try fileChanges(from: try subtree(o), to: try subtree(n), prefix: path + "/", into: &result)
        case (false, false):
          result.append(
            FileChange(
              path: path, old: GitOID(git_tree_entry_id(o).pointee),
              new: GitOID(git_tree_entry_id(n).pointee),
              newMode: newMode, oldMode: oldMode))
        default:
          // A file that became a folder or the other way: git orders
          // them apart, so this cannot be reached.
          try removed(o, prefix: prefix, into: &result)
          try added(n, prefix: prefix, into: &result)
        }
      } else if order < 0, let o {
        i += 1
        try removed(o, prefix: prefix, into: &result)
      } else if let n {
        j += 1
        try added(n, prefix: prefix, into: &result)
      }
    }
  }

  /// -1, 0 or 1 as tree entry `a` sorts before, with or after `b` in git's
  /// order: by name bytes, a folder's name as if it went on with `/`.
  static func treeOrder(_ a: OpaquePointer, _ b: OpaquePointer) -> Int32 {
    let aName = git_tree_entry_name(a)!
    let bName = git_tree_entry_name(b)!
    return Int32(
      GitTree.compare(
        UnsafeRawBufferPointer(start: aName, count: strlen(aName)),
        isFolder: git_tree_entry_type(a) == GIT_OBJECT_TREE,
        UnsafeRawBufferPointer(start: bName, count: strlen(bName)),
        newIsFolder: git_tree_entry_type(b) == GIT_OBJECT_TREE))
  }

  private func subtree(_ entry: OpaquePointer) throws -> GitTree {
    try tree(GitOID(git_tree_entry_id(entry).pointee))
  }

  private func removed(_ entry: OpaquePointer, prefix: String, into result: inout [FileChange]) throws {
    let path = prefix + String(cString: git_tree_entry_name(entry))
    if git_tree_entry_type(entry) == GIT_OBJECT_TREE {
      try fileChanges(from: try subtree(entry), to: nil, prefix: path + "/", into: &result)
    } else {
      result.append(
        FileChange(
          path: path, old: GitOID(git_tree_entry_id(entry).pointee), new: nil, newMode: 0,
          oldMode: UInt32(git_tree_entry_filemode_raw(entry).rawValue)))
    }
  }

  private func added(_ entry: OpaquePointer, prefix: String, into result: inout [FileChange]) throws {
    let path = prefix + String(cString: git_tree_entry_name(entry))
    if git_tree_entry_type(entry) == GIT_OBJECT_TREE {
      try fileChanges(from: nil, to: try subtree(entry), prefix: path + "/", into: &result)
    } else {
      result.append(
        FileChange(
          path: path, old: nil, new: GitOID(git_tree_entry_id(entry).pointee),
          newMode: UInt32(git_tree_entry_filemode_raw(entry).rawValue)))
    }
  }

  /// Sets a string in the repository's config (`.git/config`).
  func setConfig(_ name: String, _ value: String) throws {
    var config: OpaquePointer?
    try LibGit2.check(git_repository_config(&config, handle), "git_repository_config")
    defer { git_config_free(config) }
    try GitRefLocks.writing(gitDirectory: gitDirectory) {
      try LibGit2.check(git_config_set_string(config, name, value), "git_config_set_string", path: name)
    }
  }

  /// When git's index is written split: `core.splitIndex`.
  var splitIndexPolicy: SplitIndexPolicy { SplitIndexPolicy(configValue: config("core.splitIndex")) }

  /// Reads a string from the repository's config (all levels).
  func config(_ name: String) -> String? {
    var config: OpaquePointer?
    guard git_repository_config_snapshot(&config, handle) == 0 else { return nil }
    defer { git_config_free(config) }
    var value: UnsafePointer<CChar>?
    guard git_config_get_string(&value, config, name) == 0, let value else { return nil }
    return String(cString: value)
  }
}
