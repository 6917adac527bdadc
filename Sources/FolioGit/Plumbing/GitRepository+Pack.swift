internal import Clibgit2
import FolioSystem
import Glibc

extension GitRepository {
  /// The size under which ``withPackedWrites(workTree:storingSmallBlobs:_:)``
  /// may store blobs without compressing them.
  static let smallBlobBytes = 4096

  /// Opens a separate handle on the repository at `workTree` whose new
  /// objects go to memory, runs `body` with it, then writes every object it
  /// made as one pack: one file instead of one loose object per document.
  ///
  /// The handle must not outlive `body` (objects written after the pack is
  /// made would be lost), so it is only lent to it.
  ///
  /// With `storingSmallBlobs`, blobs under ``smallBlobBytes`` go into the
  /// pack as stored deflate blocks (see ``GitPackFile/addBlob(_:id:compress:)``):
  /// a merge writes thousands of documents of a few hundred bytes, and
  /// deflating them took a tenth of a large sync for ~40% of their size,
  /// which `git gc` wins back when it deltifies them.
  package static func withPackedWrites<T>(
    workTree: String, storingSmallBlobs: Bool = false, _ body: (GitRepository) throws -> T
  ) throws -> T {
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
        for (id, object) in collector.objects {
          let store =
            storingSmallBlobs && object.type == GIT_OBJECT_BLOB && object.bytes.count < smallBlobBytes
          try pack.add(object.bytes, type: object.type, known: id, compress: !store)
        }
        try pack.store(in: repository)
      } catch {
        pack.discard()
        throw error
      }
      return result
    }
  }

  /// The blobs written through this handle, by id, inside
  /// ``withPackedWrites(workTree:storingSmallBlobs:_:)`` (none outside):
  /// a checkout that follows writes them without reading them back.
  func writtenBlobs() -> [GitOID: [UInt8]] { collector?.blobs() ?? [:] }
}
