import FolioCore
import FolioSystem
import Glibc

extension Store {
  /// Moves the documents of table `name` to `layout`, as one commit (see
  /// ``TableLayout``).
  ///
  /// Pending changes are committed first. Then one commit sets the table's
  /// `layout:` in `folio.yaml`, updates `.gitattributes`, and moves every
  /// document file to its place in the new layout, with no op: a document
  /// keeps its table and pk, which is what merges go by. The working tree,
  /// git's index and the branch then move to it, as a sync's checkout
  /// moves them. Another replica takes it as any other commit, and what it
  /// writes in the old layout meanwhile is merged into the new one.
  ///
  /// ```swift
  /// let (store, commit) = try store.setLayout(.nested, of: "todos")
  /// ```
  /// - Returns: the store opened again on the new config, and the commit's
  ///   id; nil when the table has that layout already.
  /// - Throws: `UNKNOWN_TABLE`; `WOULD_OVERWRITE` when a document file of
  ///   the table cannot be committed (fix it or remove it first), or when
  ///   a file in the way was changed since the last commit; nothing is
  ///   changed then.
  public func setLayout(_ layout: TableLayout, of name: String) throws -> (store: Store, commit: String?) {
    let commit: GitOID? = try lock.withLock {
      try recoverBeforeWrite()
      let table = try self.table(named: name)
      if table.layout == layout { return nil }
      let (repository, head) = try commitPending(before: "convert", table: table)
      let newText = try ConfigEditor(text: try configText()).setting(layout: layout, of: name)
      let moved = try repository.relayingOut(
        try head.tree(), folder: table.path, from: table.layout, to: layout)
      let tree = try repository.updatedTree(
        try repository.tree(moved), setting: try configFileChanges(newText, repository: repository))
      let commit = try commitWholeTableChange(
        tree, onto: head, message: "folio: table '\(name)' to the \(layout.rawValue) layout",
        verb: ("converting", "convert"), repository: repository)
      // The checkout empties the old layout's folders the new one does not
      // use; a table's folder holds only documents and its layout's
      // folders (`fsck`).
      table.layout.removeEmptyFolders(in: directory(of: table))
      return commit
    }
    return (try Store(rootPath: rootPath, wiring: wiring), commit?.description)
  }
}

extension Store {
  /// Commits what is pending before one commit that changes `table` as a
  /// whole (a rename, a conversion), with the lock held.
  /// - Returns: the repository and the commit to build on.
  /// - Throws: `WOULD_OVERWRITE` when a file of the table cannot be
  ///   committed; `GIT` when the store has no commit yet.
  func commitPending(before verb: String, table: TableConfig) throws -> (GitRepository, GitCommit) {
    let summary = try commitLocked(message: nil)
    let broken = summary.problems.filter {
      ($0.location?.file ?? $0.path ?? "").hasPrefix(table.path + "/")
    }
    if let first = broken.first {
      throw FolioError(
        .wouldOverwrite,
        "table '\(table.name)' has a file that cannot be committed (\(first.headline)); fix or remove it, then \(verb)",
        table: table.name)
    }
    let repository = try openRepository()
    guard let head = try repository.headCommit() else {
      throw FolioError(.git, "the store has no commit yet; commit before you \(verb) a table")
    }
    return (repository, head)
  }

  /// The changes that set `folio.yaml` to `text` and `.gitattributes` to
  /// what its tables need, for a commit that changes a table as a whole.
  func configFileChanges(_ text: String, repository: GitRepository) throws -> [(
    path: String, id: GitOID?, mode: UInt32
  )] {
    let config = try Config(yaml: text)
    let attributes = String(decoding: try FileSystem.read(rootPath + "/.gitattributes") ?? [], as: UTF8.self)
    let changes: [(path: String, id: GitOID?, mode: UInt32)] = [
      (Config.fileName, try repository.writeBlob(Array(text.utf8)), 0),
      (
        ".gitattributes",
        try repository.writeBlob(
          Array(Store.gitAttributes(existing: attributes, tables: config.tables).utf8)),
        0
      ),
    ]
    return changes
  }

  /// Commits `tree` onto `head`, the change to a table as a whole, and
  /// moves the working tree, git's index and the branch to it, as a sync's
  /// checkout does.
  /// - Parameter verb: the change's name in messages, as "converting",
  ///   "convert".
  /// - Throws: `WOULD_OVERWRITE` when a file in the way was changed since
  ///   the last commit.
  func commitWholeTableChange(
    _ tree: GitOID, onto head: GitCommit, message: String, verb: (doing: String, do: String),
    repository: GitRepository
  ) throws -> GitOID {
    let commit = try repository.createCommit(tree: tree, parents: [head.id], message: message)
    let blocked = try checkout(commit, branch: try repository.headBranch(), repository: repository)
    if !blocked.isEmpty {
      throw FolioError(
        .wouldOverwrite,
        "\(verb.doing) would overwrite changes to \(blocked.joined(separator: ", ")) made since the last "
          + "commit; fix or commit them, then \(verb.do)", remedy: .showLeftOutFiles)
    }
    return commit
  }
}

extension GitRepository {
  /// The root tree `root` with every document file of the table folder
  /// `path` moved from its place in layout `old` to its place in `new`;
  /// other files stay where they are. `root` itself when the layouts are
  /// the same or the folder is absent.
  func relayingOut(_ root: GitTree, folder path: String, from old: TableLayout, to new: TableLayout) throws
    -> GitOID
  {
    guard old != new, let folder = try root.subtree(at: path, repository: self) else { return root.id }
    let from = TableConfig(name: "", path: path, layout: old)
    let to = TableConfig(name: "", path: path, layout: new)
    var changes: [(path: String, id: GitOID?, mode: UInt32)] = []
    for (name, id) in try folder.documentBlobs(in: "", layout: old, repository: self) {
      guard let pk = from.pk(fromDocumentName: name), let place = try? to.documentName(for: pk) else {
        continue
      }
      changes.append((path + "/" + name, nil, 0))
      changes.append((path + "/" + place, id, 0))
    }
    return changes.isEmpty ? root.id : try updatedTree(root, setting: changes)
  }
}
