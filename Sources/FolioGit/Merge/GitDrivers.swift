import FolioCore
import FolioJSON
import FolioSystem
import Foundation
import Glibc

/// What Folio registers with git, and what git runs: the merge driver
/// (`merge.folio.driver`), which resolves table documents and op logs by
/// replay; the diff driver's textconv (`diff.folio.textconv`); and the
/// `post-merge` hook that finishes the merges the driver never sees.
/// ``Store``'s methods of the same names hand their calls here.
struct GitDrivers {
  let store: Store

  /// The `diff.folio.textconv` command git runs on table documents, given
  /// the program to call. When the program is missing, git shows the file
  /// as it is: plain git keeps working on a machine without Folio.
  static func diffTextconvCommand(program: String) -> String {
    let quoted = shellWord(program)
    return "f() { if command -v \(quoted) >/dev/null 2>&1; then \(quoted) diff-textconv \"$1\"; "
      + "else cat \"$1\"; fi; }; f"
  }

  /// ``Store/registerDiffDriver(program:)``.
  func registerDiffDriver(program: String) throws {
    let repository = try store.openRepository()
    let command = Self.diffTextconvCommand(program: program)
    if repository.config("diff.folio.textconv") != command {
      try repository.setConfig("diff.folio.textconv", command)
    }
  }

  /// ``Store/textconv(_:)``.
  static func textconv(_ bytes: [UInt8]) -> [UInt8] {
    guard let value = try? JSONValue(parsing: bytes), case .object(let object) = value else { return bytes }
    var out: [UInt8] = []
    for (tokens, leaf) in HistoryReader.leaves(of: object) {
      out += Array(JSONPointer(tokens).description.utf8)
      out += Array(" = ".utf8)
      out += leaf.compactBytes()
      out.append(0x0A)
    }
    return out
  }

  /// The `merge.folio.driver` command line git runs for table documents and
  /// op logs, given the program to call.
  static func mergeDriverCommand(program: String) -> String {
    "\(shellWord(program)) merge-driver %O %A %B %P"
  }

  /// ``Store/registerMergeDriver(program:)``.
  func registerMergeDriver(program: String) throws {
    let repository = try store.openRepository()
    let command = Self.mergeDriverCommand(program: program)
    if repository.config("merge.folio.driver") != command {
      try repository.setConfig("merge.folio.name", "Folio: replay operations (counters add, sets union)")
      try repository.setConfig("merge.folio.driver", command)
    }
    try installPostMergeHook(program: program, repository: repository)
    try registerDiffDriver(program: program)
  }

  /// The first line after the shebang of the hook Folio writes, to know it
  /// again.
  static let postMergeHookMarker = "# folio: post-merge hook"

  /// The name a user's own `post-merge` hook moves to.
  static let userPostMergeHook = "post-merge.user"

  private func installPostMergeHook(program: String, repository: GitRepository) throws {
    var hooks = store.gitDirectory + "/hooks"
    if let configured = repository.config("core.hooksPath") {
      // As git reads it: `~/` is the home folder, a relative path is
      // relative to the work tree, where hooks run.
      if configured.hasPrefix("~/"), let home = FolioSettings.current.home {
        hooks = home + configured.dropFirst()
      } else {
        hooks = configured.hasPrefix("/") ? configured : store.rootPath + "/" + configured
      }
    }
    let path = hooks + "/post-merge"
    try FileSystem.makeDirectories(hooks)
    if let existing = try FileSystem.read(path),
      !String(decoding: existing, as: UTF8.self).contains(Self.postMergeHookMarker)
    {
      try keepUserHook(at: path, bytes: existing, hooks: hooks)
    }
    let quoted = shellWord(program)
    let script = """
      #!/bin/sh
      \(Self.postMergeHookMarker) (written by 'folio init'; delete this file to stop it).
      # Resolves documents that both sides changed through Folio when git's
      # merge saw a change on one side only, as 'folio sync' would; then runs
      # the hooks that were here before ('folio init' moved them to
      # \(Self.userPostMergeHook)*).
      \(quoted) merge-driver --post-merge "$@"
      status=$?
      for hook in "$(dirname "$0")"/\(Self.userPostMergeHook) "$(dirname "$0")"/\(Self.userPostMergeHook).*; do
        if [ -f "$hook" ] && [ -x "$hook" ]; then "$hook" "$@" || status=$?; fi
      done
      exit $status

      """
    if try FileSystem.read(path) != Array(script.utf8) {
      try FileSystem.writeAtomically(path, Array(script.utf8), sync: false)
    }
    chmod(path, 0o755)
  }

  /// Moves a user's own hook at `path` out of the way, to the first free
  /// `post-merge.user*` name; a copy of one already moved is just dropped.
  private func keepUserHook(at path: String, bytes: [UInt8], hooks: String) throws {
    for n in 1...100 {
      let name = hooks + "/" + Self.userPostMergeHook + (n == 1 ? "" : ".\(n)")
      if let kept = try FileSystem.read(name) {
        guard kept == bytes else { continue }
        _ = try FileSystem.remove(path)
        return
      }
      _ = try FileSystem.syscall("rename", path: path) { rename(path, name) }
      return
    }
    throw FolioError(.io, "too many \(Self.userPostMergeHook)* hooks in \(hooks)", path: path)
  }

  /// ``Store/reconcileGitMerge()``.
  @discardableResult
  func reconcileGitMerge() throws -> [String] {
    try store.lock.withLock {
      let repository = try store.openRepository()
      guard let head = try repository.headCommit() else { return [] }
      // git has written the tree already (its own checks refuse `.git`
      // and writing through links); what Folio refuses beyond them (links
      // in table folders, names too long for its temp files) is reported
      // here, before Folio reads or writes any of it.
      if let before = try repository.origHead(other: head.id) {
        try TreePathValidator(repository: repository, config: store.config).validate(
          try head.tree(), of: head.id, against: try repository.commit(before).tree())
        try PullUndo(store: store).undoPullPastClockBound(from: before, to: head.id, repository: repository)
      }
      guard head.parentIDs.count == 2 else { return [] }
      let merge = TreeMerge(repository: repository, config: store.config)
      let result: TreeMerge.Result
      do {
        result = try merge.merge(ours: head.parentIDs[0], theirs: head.parentIDs[1])
      } catch let error as FolioError where error.code == .conflict {
        return []  // git merged those files itself; its documents stand
      }
      let headTree = try head.tree()
      let changes = try repository.changes(from: headTree, to: try repository.tree(result.tree))
        .filter { merge.documentAddress($0.path) != nil || $0.path.hasPrefix(Conflict.folder + "/") }
      guard !changes.isEmpty else { return [] }
      let tree = try repository.updatedTree(headTree, setting: changes.map { ($0.path, $0.new, 0) })
      let commit = try repository.createCommit(tree: tree, parents: head.parentIDs, message: head.message)
      if let latest = result.latestStamp { try store.clock.observe(remoteStamp: latest) }
      let blocked = try Checkout(store: store).checkout(
        commit, branch: try repository.headBranch(), repository: repository)
      if !blocked.isEmpty {
        throw FolioError(
          .wouldOverwrite,
          "the merge needs to rewrite \(blocked.joined(separator: ", ")), which changed since; "
            + "commit them, then sync again", remedy: .syncAgain)
      }
      return changes.map(\.path).sorted()
    }
  }

  /// ``Store/runMergeDriver(basePath:oursPath:theirsPath:path:)``.
  func runMergeDriver(basePath: String, oursPath: String, theirsPath: String, path: String) throws
    -> Bool
  {
    let read = { (file: String) throws -> [UInt8] in try FileSystem.read(file) ?? [] }
    if TreeMerge.opLogName(path) != nil {
      try ClockBound(store: store).checkClock(
        ofLog: try read(theirsPath), base: try read(basePath), path: path)
      let merged = OpLogMerge.merge(
        base: try read(basePath), ours: try read(oursPath), theirs: try read(theirsPath))
      try FileSystem.writeAtomically(oursPath, merged, sync: false)
      return true
    }
    let repository = try store.openRepository()
    let merge = TreeMerge(repository: repository, config: store.config)
    guard let (table, pk) = merge.documentAddress(path) else { return false }
    let merged: JSONObject?
    if let ours = try repository.headCommit()?.id,
      let theirs = try mergeHead(repository: repository, ours: ours),
      let resolved = try merge.resolveDocument(path: path, ours: ours, theirs: theirs)
    {
      merged = resolved
    } else {
      func parse(_ file: String) throws -> JSONObject? {
        let bytes = try read(file)
        if bytes.isEmpty { return nil }
        try Limits.check(bytes.count, limit: Limits.maximumDocumentBytes, what: "the document", path: path)
        guard case .object(let object) = try JSONValue(parsing: bytes, file: path) else {
          throw FolioError(.invalidDocument, "a document must be a JSON object", path: path)
        }
        return object
      }
      merged = DocumentResolver(table: table).resolve(
        pk: pk, base: try parse(basePath),
        ours: .init(
          document: try parse(oursPath), ops: [], syntheticStamp: HLC(wall: 1, counter: 0, replica: "~ours")),
        theirs: .init(
          document: try parse(theirsPath), ops: [],
          syntheticStamp: HLC(wall: 1, counter: 0, replica: "~theirs")))
    }
    guard let merged else { return false }
    try FileSystem.writeAtomically(oursPath, JSONValue.object(merged).canonicalBytes(), sync: false)
    return true
  }

  /// The commit being merged into HEAD, if git says.
  private func mergeHead(repository: GitRepository, ours: GitOID) throws -> GitOID? {
    if let bytes = try FileSystem.read(store.gitDirectory + "/MERGE_HEAD"),
      let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first,
      let id = GitOID(hex: String(line)), id != ours
    {
      return id
    }
    for (name, _) in ProcessInfo.processInfo.environment.sorted(by: { $0.key < $1.key })
    where name.hasPrefix("GITHEAD_") {
      if let id = GitOID(hex: String(name.dropFirst(8))), id != ours, (try? repository.commit(id)) != nil {
        return id
      }
    }
    return nil
  }
}
