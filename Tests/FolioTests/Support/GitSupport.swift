import Foundation

@testable import Folio

/// Runs `git ARGS` in `directory` and returns its output; fails the test on a
/// non-zero exit unless `allowFailure`.
@discardableResult
func git(_ arguments: [String], in directory: String, allowFailure: Bool = false) throws -> (
  status: Int32, output: String
) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
  process.arguments = arguments
  process.currentDirectoryURL = URL(fileURLWithPath: directory)
  var environment = ProcessInfo.processInfo.environment
  environment["GIT_AUTHOR_NAME"] = environment["GIT_AUTHOR_NAME"] ?? "Folio Test"
  environment["GIT_AUTHOR_EMAIL"] = environment["GIT_AUTHOR_EMAIL"] ?? "test@folio.invalid"
  environment["GIT_COMMITTER_NAME"] = environment["GIT_COMMITTER_NAME"] ?? "Folio Test"
  environment["GIT_COMMITTER_EMAIL"] = environment["GIT_COMMITTER_EMAIL"] ?? "test@folio.invalid"
  process.environment = environment
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let output = String(decoding: data, as: UTF8.self)
  if process.terminationStatus != 0 && !allowFailure {
    throw FolioError(.git, "git \(arguments.joined(separator: " ")) failed in \(directory): \(output)")
  }
  return (process.terminationStatus, output)
}

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
    try scratch.write(name + "/folio.yaml", yaml)
    let store = try Store.create(at: URL(fileURLWithPath: scratch.path + "/" + name))
    try git(["remote", "add", "origin", remoteURL], in: store.rootPath)
    try store.sync()
    return store
  }

  /// Another replica, cloned from the remote.
  func clone(_ name: String, url: String? = nil) throws -> Store {
    try Store.clone(url: url ?? remoteURL, into: URL(fileURLWithPath: scratch.path + "/" + name))
  }

  func remove() { scratch.remove() }
}

/// Every table file under `store`, relative path → bytes.
func tableFiles(_ store: Store) throws -> [String: [UInt8]] {
  var files: [String: [UInt8]] = [:]
  for table in store.config.tables {
    for name in try FileSystem.list(store.rootPath + "/" + table.path) ?? [] where name.hasSuffix(".json") {
      files[table.path + "/" + name] = try FileSystem.read(store.rootPath + "/" + table.path + "/" + name)
    }
  }
  return files
}

