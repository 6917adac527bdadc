import Foundation

extension Store {
  /// Makes `url` a store, or opens the store already there; safe to run twice.
  ///
  /// Creates the git repository if there is none, a minimal `folio.yaml`
  /// (or `config` if given and there is no `folio.yaml` yet), `.gitattributes`
  /// routing table files to Folio's merge driver, `.folio/ops/`, and the
  /// replica id.
  /// - Parameter mergeDriver: the `folio` program git should run as the
  ///   merge driver (registered in `.git/config` as `merge.folio.driver`).
  @discardableResult
  public static func create(at url: URL, config: Config? = nil, mergeDriver: String = "folio") throws -> Store
  {
    let start = url.standardizedFileURL.path
    let rootPath = findRoot(from: start) ?? start
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
    let store = try Store(rootPath: canonicalRoot)
    try FileSystem.makeDirectories(canonicalRoot + "/" + opsFolder)
    try store.writeGitAttributes()
    try store.registerMergeDriver(program: mergeDriver)
    return store
  }
}
