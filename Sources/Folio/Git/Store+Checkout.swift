import Foundation
import Glibc

extension Store {
  /// Where a checkout in progress is recorded: the commit HEAD moves from
  /// and the one it moves to.
  var checkoutJournalPath: String { privateDirectory + "/checkout" }

  /// Moves the working tree, index and `branch` from HEAD's commit to
  /// `target`, crash-safely: every file is written whole (temp file, then
  /// rename), and a journal written first lets the next open finish the job
  /// after a `kill -9`. libgit2's own checkout truncates files in place, so a
  /// kill could leave a torn document. Call with the lock held.
  /// - Returns: the paths in the way (changed since the commit); nothing is
  ///   written then.
  func checkout(_ target: GitOID, branch: String, repository: GitRepository) throws -> [String] {
    let from = try repository.headCommit()
    let changes = try repository.changes(from: try from?.tree(), to: try repository.commit(target).tree())
    let evicted = try evictedPaths()
    let index = try repository.index()
    try index.readFromDisk()
    var blocked: [String] = []
    for change in changes where !evicted.contains(change.path) {
      let currentID = try blobID(ofFile: change.path, index: index)
      if currentID != change.old && currentID != change.new { blocked.append(change.path) }
    }
    if !blocked.isEmpty { return blocked.sorted() }
    let line = (from?.id.description ?? "-") + " " + target.description + " " + branch + "\n"
    try FileSystem.writeAtomically(checkoutJournalPath, Array(line.utf8), sync: true)
    // One event for live queries in other processes (TransactionMarker).
    try withTransactionMarker {
      try finishCheckout(changes, target: target, branch: branch, repository: repository, evicted: evicted)
    }
    return []
  }

  /// Writes the files, the index and the ref, then drops the journal. Safe
  /// to run again: a file that holds neither the old nor the new version was
  /// changed by someone since, and is left alone.
  private func finishCheckout(
    _ changes: [(path: String, old: GitOID?, new: GitOID?)], target: GitOID, branch: String,
    repository: GitRepository, evicted: Set<String>
  ) throws {
    var leftAlone = Set<String>()
    let index = try repository.index()
    try index.readFromDisk()
    var written = 0
    for change in changes where !evicted.contains(change.path) {
      let path = rootPath + "/" + change.path
      let currentID = try blobID(ofFile: change.path, index: index)
      if currentID == change.new { continue }
      if currentID != change.old {
        leftAlone.insert(change.path)
        continue
      }
      if let id = change.new {
        try FileSystem.makeDirectories(FileSystem.split(path).directory)
        try FileSystem.writeAtomically(path, try repository.blob(id), sync: false)
      } else {
        _ = try FileSystem.remove(path)
      }
      written += 1
      if written == max(1, changes.count / 2) { testPause(at: .checkout) }
    }
    try FileSystem.syncFileSystem(containing: rootPath)
    for change in changes {
      if let id = change.new {
        let skip = evicted.contains(change.path)
        // No stat data for a file someone changed since: git rehashes it.
        let statFrom = skip || leftAlone.contains(change.path) ? nil : rootPath + "/" + change.path
        try index.add(path: change.path, id: id, filePath: statFrom, skipWorktree: skip)
      } else {
        _ = try? index.remove(path: change.path)
      }
    }
    try index.write()
    try repository.setReference(branch, to: target, message: "folio sync")
    _ = try FileSystem.remove(checkoutJournalPath)
  }

  /// Finishes a checkout a crash interrupted. Call with the lock held.
  func recoverCheckout() throws {
    guard let bytes = try FileSystem.read(checkoutJournalPath) else { return }
    let parts = String(decoding: bytes, as: UTF8.self).split(separator: " ").map {
      $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    guard parts.count == 3, let target = GitOID(hex: parts[1]) else {
      _ = try FileSystem.remove(checkoutJournalPath)  // torn: written before anything else
      return
    }
    let repository = try openRepository()
    let fromTree = try GitOID(hex: parts[0]).map { try repository.commit($0).tree() }
    let changes = try repository.changes(from: fromTree, to: try repository.commit(target).tree())
    try finishCheckout(
      changes, target: target, branch: parts[2], repository: repository, evicted: try evictedPaths())
  }

  /// The blob id of the file at `relative` (nil when there is none). A file
  /// whose stat data matches its index entry holds the entry's blob, as
  /// `folio commit` and git assume too, so only changed files are read.
  private func blobID(ofFile relative: String, index: GitIndex) throws -> GitOID? {
    let path = rootPath + "/" + relative
    var st = stat()
    guard lstat(path, &st) == 0 else { return nil }
    if let entry = index.entry(at: relative), !entry.skipWorktree, Store.statMatches(entry, st) {
      return entry.id
    }
    return try FileSystem.read(path).map { try GitRepository.hashBlob($0) }
  }

  /// The relative paths of evicted documents.
  func evictedPaths() throws -> Set<String> {
    var paths = Set<String>()
    for (name, pks) in try loadEvictions() {
      guard let table = config.table(named: name) else { continue }
      for pk in pks { paths.insert(table.path + "/" + (try PrimaryKey.fileName(for: pk))) }
    }
    return paths
  }
}
