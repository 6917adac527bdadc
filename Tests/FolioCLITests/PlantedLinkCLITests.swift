import FolioTestSupport
import Foundation
import Testing

/// Links planted where Folio keeps its own files are never followed: the
/// index daemon's lock and the op log folder. The file a link points to is
/// neither written nor read, nor quoted in a message, and the command says
/// which link is in the way.
struct PlantedLinkCLITests {
  func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n")
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("put", "todos", "a", "-", input: #"{"n": 1}"#).status == 0)
    try scratch.write("outside/secret.txt", "outside secret\n")
    return scratch
  }

  @Test func aLinkAtThePublisherLockIsNotWrittenThrough() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.path + "/.git/folio/index", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path + "/.git/folio/index/publisher.lock",
      withDestinationPath: scratch.path + "/outside/secret.txt")
    let daemon = try scratch.folio("index-daemon", "--idle", "1s")
    #expect(daemon.status == 1, "\(daemon.stderr)")
    #expect(daemon.stderr.contains("error: UNSAFE_PATH:"), "\(daemon.stderr)")
    #expect(daemon.stderr.contains("publisher.lock is a symbolic link"), "\(daemon.stderr)")
    #expect(scratch.read("outside/secret.txt") == "outside secret\n")
  }

  @Test func aLinkedOpLogFolderIsNeitherReadNorQuoted() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let ops = scratch.path + "/.folio/ops"
    let replica = try #require(try FileManager.default.contentsOfDirectory(atPath: ops).first)
    // The outside folder holds a log of the same name, with a line that
    // a reader would quote if it read it.
    try scratch.write("outside/ops/" + replica, "{\"hlc\": \"SECRET-LINE\"\n")
    try FileManager.default.moveItem(atPath: ops, toPath: scratch.path + "/.folio/ops.real")
    try FileManager.default.createSymbolicLink(
      atPath: ops, withDestinationPath: scratch.path + "/outside/ops")
    for arguments in [["watch", "--json"], ["blame", "todos", "a"], ["status"], ["log", "todos"]] {
      let result = try FolioRunner.run(arguments, in: scratch.path)
      #expect(result.status != 0, "\(arguments): \(result.stdout)")
      #expect(result.stderr.contains("UNSAFE_PATH"), "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(".folio/ops"), "\(arguments): \(result.stderr)")
      #expect(
        !(result.stdout + result.stderr).contains("SECRET"), "\(arguments): \(result.stdout)\(result.stderr)")
    }
  }
}
