import FolioCore
import FolioSystem
import Foundation

/// Makes a store where there is none: the git repository, `folio.yaml`,
/// the ops folder, `.gitattributes` and the merge driver.
package enum StoreSetup {
  /// Makes `url` a store with the layers in `wiring`; the public
  /// `create(at:config:mergeDriver:)` (module `Folio`) passes them all.
  @discardableResult
  package static func create(
    at url: URL, config: Config? = nil, mergeDriver: String = "folio", wiring: StoreWiring
  ) throws -> Store {
    let start = url.standardizedFileURL.path
    let rootPath = Store.findRoot(from: start) ?? start
    try FileSystem.makeDirectories(rootPath)
    let canonicalRoot = FileSystem.realPath(rootPath) ?? rootPath
    if try GitRepository.open(workTree: canonicalRoot) == nil {
      _ = try GitRepository.initialize(workTree: canonicalRoot)
    }
    let configPath = canonicalRoot + "/" + Config.fileName
    if !FileSystem.exists(configPath) {
      let text = (config ?? Config()).yamlText()
      try FileSystem.writeAtomically(configPath, Array(text.utf8), sync: true)
    }
    let store = try Store(rootPath: canonicalRoot, wiring: wiring)
    try FileSystem.makeDirectories(canonicalRoot + "/" + Store.opsFolder)
    try store.writeGitAttributes()
    try store.registerMergeDriver(program: mergeDriver)
    return store
  }
}
