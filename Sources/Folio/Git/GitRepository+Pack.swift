internal import Clibgit2

extension GitRepository {
  /// Opens a separate handle on the repository at `workTree` whose new
  /// objects go to memory, runs `body` with it, then writes every object it
  /// made as one pack: one file instead of one loose object per document.
  ///
  /// The handle must not outlive `body` (objects written after the pack is
  /// made would be lost), so it is only lent to it.
  static func withPackedWrites<T>(workTree: String, _ body: (GitRepository) throws -> T) throws -> T {
    guard let repository = try open(workTree: workTree) else {
      throw FolioError(.git, "\(workTree) is not a git working tree", path: workTree)
    }
    var odb: OpaquePointer?
    try LibGit2.check(git_repository_odb(&odb, repository.handle), "git_repository_odb")
    defer { git_odb_free(odb) }
    var backend: UnsafeMutablePointer<git_odb_backend>?
    try LibGit2.check(git_mempack_new(&backend), "git_mempack_new")
    // The odb owns the backend from here on and frees it with itself.
    try LibGit2.check(git_odb_add_backend(odb, backend, 1000), "git_odb_add_backend")
    let result = try body(repository)
    var buffer = git_buf()
    try LibGit2.check(git_mempack_dump(&buffer, repository.handle, backend), "git_mempack_dump")
    defer {
      git_buf_dispose(&buffer)
      git_mempack_reset(backend)
    }
    var writer: UnsafeMutablePointer<git_odb_writepack>?
    try LibGit2.check(git_odb_write_pack(&writer, odb, nil, nil), "git_odb_write_pack")
    defer { writer!.pointee.free(writer) }
    var progress = git_indexer_progress()
    try LibGit2.check(
      writer!.pointee.append(writer, buffer.ptr, buffer.size, &progress), "git_odb_writepack.append")
    try LibGit2.check(writer!.pointee.commit(writer, &progress), "git_odb_writepack.commit")
    return result
  }
}
