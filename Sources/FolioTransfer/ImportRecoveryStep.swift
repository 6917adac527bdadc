import FolioCore
import FolioSystem

extension Importer {
  /// Finishes an import that a crash interrupted after its durability
  /// point. Call with the lock held.
  func recoverImport() throws {
    let workspace = ImportWorkspace(privateDirectory: store.privateDirectory)
    guard Journal.isPending(at: workspace.journalPath) else { return }
    if let record = try workspace.readRecord(root: store.rootPath) {
      try workspace.land(record, root: store.rootPath)
      store.clock.reset()
    } else {
      try workspace.discard()
    }
  }
}

/// Finishes an import a crash interrupted past its durability point, at
/// open and before writes.
package struct ImportRecoveryStep: RecoveryStep {
  package init() {}

  package func isPending(in store: Store) -> Bool {
    ImportWorkspace.isPending(privateDirectory: store.privateDirectory)
  }
  package func recover(_ store: Store) throws { try Importer(store: store).recoverImport() }
}
