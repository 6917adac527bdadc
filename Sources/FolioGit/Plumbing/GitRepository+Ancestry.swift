internal import Clibgit2
import Glibc

extension GitRepository {
  /// The commits reachable from `head`, each after all of its parents:
  /// git's topological order, oldest first.
  package func ancestry(of head: GitOID) throws -> [GitOID] {
    var walk: OpaquePointer?
    try LibGit2.check(git_revwalk_new(&walk, handle), "git_revwalk_new")
    defer { git_revwalk_free(walk) }
    try LibGit2.check(
      git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL.rawValue | GIT_SORT_REVERSE.rawValue),
      "git_revwalk_sorting")
    var start = head.raw
    try LibGit2.check(git_revwalk_push(walk, &start), "git_revwalk_push")
    var ids: [GitOID] = []
    var oid = git_oid()
    while true {
      let status = git_revwalk_next(&oid, walk)
      if status == GIT_ITEROVER.rawValue { break }
      try LibGit2.check(status, "git_revwalk_next")
      ids.append(GitOID(oid))
    }
    return ids
  }

  /// The size of object `id` in bytes, read from its header without
  /// inflating it.
  package func objectSize(_ id: GitOID) throws -> Int {
    var odb: OpaquePointer?
    try LibGit2.check(git_repository_odb(&odb, handle), "git_repository_odb")
    defer { git_odb_free(odb) }
    var oid = id.raw
    var size = 0
    var type = GIT_OBJECT_ANY
    try LibGit2.check(git_odb_read_header(&size, &type, odb, &oid), "git_odb_read_header")
    return size
  }

  /// Whether blob `id` holds the first bytes of `bytes`, compared in place
  /// (a 13 MB op log is not copied out).
  package func isPrefix(_ id: GitOID, of bytes: [UInt8]) throws -> Bool {
    var oid = id.raw
    var blob: OpaquePointer?
    try LibGit2.check(git_blob_lookup(&blob, handle, &oid), "git_blob_lookup")
    defer { git_blob_free(blob) }
    let size = Int(git_blob_rawsize(blob))
    guard size <= bytes.count else { return false }
    guard size > 0, let raw = git_blob_rawcontent(blob) else { return true }
    return bytes.withUnsafeBytes { memcmp($0.baseAddress!, raw, size) == 0 }
  }
}
