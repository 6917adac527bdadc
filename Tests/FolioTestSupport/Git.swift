import Folio
import Foundation

/// Runs `git ARGS` in `directory` and returns its output; fails the test on a
/// non-zero exit unless `allowFailure`.
@discardableResult
public func git(_ arguments: [String], in directory: String, allowFailure: Bool = false) throws -> (
  status: Int32, output: String
) {
  let (status, output) = try runWithIdentity("/usr/bin/git", arguments, in: directory)
  if status != 0 && !allowFailure {
    throw FolioError(.git, "git \(arguments.joined(separator: " ")) failed in \(directory): \(output)")
  }
  return (status, output)
}

/// Runs `git COMMAND` through the shell in `directory`, so a test can
/// write a command line as a person would (quotes, redirections, `&&`).
/// - Returns: the exit status and what it wrote to stdout and stderr.
@discardableResult
public func shellGit(_ command: String, in directory: String) throws -> (status: Int32, output: String) {
  try runWithIdentity("/bin/sh", ["-c", "git " + command], in: directory)
}

/// Runs `executable` with a git identity in the environment where the
/// caller's has none, so commits work on a machine without `user.name`.
private func runWithIdentity(_ executable: String, _ arguments: [String], in directory: String) throws -> (
  status: Int32, output: String
) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
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
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
