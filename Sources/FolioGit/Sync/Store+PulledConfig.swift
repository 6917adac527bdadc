import FolioCore
import FolioSystem
import Foundation

extension Store {
  /// Undoes the pull with the layers in `wiring`; the public
  /// `undoPullBringingBadConfig(at:)` (module `Folio`) passes them all.
  package static func undoPullBringingBadConfig(at directory: URL, wiring: StoreWiring) throws {
    let root = directory.standardizedFileURL.path
    let configPath = root + "/" + Config.fileName
    guard let current = try FileSystem.read(configPath) else { return }
    let failure: FolioError
    do {
      _ = try Config(bytes: current, file: Config.fileName)
      return
    } catch let error as FolioError {
      failure = error
    }
    guard let repository = try GitRepository.open(workTree: root),
      let head = try repository.headCommit(),
      let orig = try repository.origHead(other: head.id),
      let entry = try repository.commit(orig).tree().entry(at: Config.fileName)
    else { throw failure }
    let trusted = try repository.blob(entry.id)
    guard (try? Config(bytes: trusted, file: Config.fileName)) != nil else { throw failure }
    // The old folio.yaml back first, so that the store opens on it (the
    // checkout then finds it already as ORIG_HEAD has it).
    try FileSystem.writeAtomically(configPath, trusted, sync: true)
    let store = try Store(rootPath: root, wiring: wiring)
    var error = failure
    error.message +=
      " (in the \(Config.fileName) that the pull of commit \(head.id.description.prefix(12)) brought, which would make every command fail on this store)"
    error.message += try store.lock.withLock { try store.undoPull(to: orig, repository: repository) }
    throw error
  }
}
