import Folio
import FolioCore
import FolioSystem
import FolioTestSupport
import Foundation

/// A bare repository to sync through, and the replicas cloned from it.
struct SyncFixture {
  let scratch = Scratch()
  var remotePath: String { scratch.path + "/remote.git" }
  var remoteURL: String { "file://" + remotePath }

  init() throws {
    try git(["init", "-q", "--bare", remotePath], in: scratch.path)
  }

  /// The first replica: creates the store with `yaml`, commits and pushes.
  func seed(yaml: String, name: String = "r0") throws -> Store {
    try scratch.write(name + "/folio.yaml", withTestLayout(yaml))
    let store = try Store.create(at: URL(fileURLWithPath: scratch.path + "/" + name))
    try git(["remote", "add", "origin", remoteURL], in: store.rootPath)
    try store.sync()
    return store
  }

  /// Another replica, cloned from the remote.
  func clone(_ name: String, url: String? = nil) throws -> Store {
    try Store.clone(url: url ?? remoteURL, into: URL(fileURLWithPath: scratch.path + "/" + name))
  }

  /// Serves the remote through a real `git daemon`, where hooks run (in
  /// receive-pack), and points `store`'s origin at it.
  func serveThroughDaemon(for store: Store) throws -> GitDaemon {
    let daemon = try GitDaemon(base: scratch.path)
    try git(["remote", "set-url", "origin", daemon.url("remote.git")], in: store.rootPath)
    return daemon
  }

  /// Installs `script` as the remote's hook `name`.
  func installHook(_ name: String, _ script: String) throws {
    let hook = remotePath + "/hooks/" + name
    try script.write(toFile: hook, atomically: true, encoding: .utf8)
    chmod(hook, 0o755)
  }

  func remove() { scratch.remove() }
}

/// Every table file under `store`, relative path → bytes.
func tableFiles(_ store: Store) throws -> [String: [UInt8]] {
  var files: [String: [UInt8]] = [:]
  for table in store.config.tables {
    for name in try table.listDocumentNames(in: store.rootPath + "/" + table.path) ?? []
    where name.hasSuffix(".json") {
      files[table.path + "/" + name] = try FileSystem.read(store.rootPath + "/" + table.path + "/" + name)
    }
  }
  return files
}
