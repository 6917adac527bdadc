internal import Clibgit2
import FolioSystem
import Glibc

extension GitRepository {
  /// Opens a separate handle on the repository at `workTree` whose new
  /// objects go to memory, runs `body` with it, then writes every object it
  /// made as one pack: one file instead of one loose object per document.
  ///
  /// The handle must not outlive `body` (objects written after the pack is
  /// made would be lost), so it is only lent to it.
  package static func withPackedWrites<T>(workTree: String, _ body: (GitRepository) throws -> T) throws -> T {
    let collector = GitObjectCollector()
    return try withExtendedLifetime(collector) {
      guard let repository = try open(workTree: workTree) else {
        throw FolioError(.git, "\(workTree) is not a git working tree", path: workTree)
      }
      var odb: OpaquePointer?
      try LibGit2.check(git_repository_odb(&odb, repository.handle), "git_repository_odb")
      defer { git_odb_free(odb) }
      let backend = try collector.makeBackend()
      // The odb owns the backend from here on and frees it with itself.
      try LibGit2.check(git_odb_add_backend(odb, backend, 1000), "git_odb_add_backend")
      repository.collector = collector
      let result = try body(repository)
      guard !collector.objects.isEmpty else { return result }
      let folder = repository.gitDirectory + "/objects/pack"
      try FileSystem.makeDirectories(folder)
      let pack = try GitPackFile(path: folder + "/tmp_folio_\(getpid()).pack")
      do {
        for (_, object) in collector.objects { _ = try pack.add(object.bytes, type: object.type) }
        try pack.store(in: repository)
      } catch {
        pack.discard()
        throw error
      }
      return result
    }
  }
}
