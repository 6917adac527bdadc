import Folio
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioSystem

/// Files a work tree swaps out, unlinked on threads of their own: all gone
/// once `finish()` returns, in folders the work tree has already left, and
/// a failure comes back from `finish()` naming the file.
@Suite struct DeferredUnlinksTests {
  /// Names of the temp files left anywhere below `root`.
  func leftovers(_ root: String) -> [String] {
    let paths = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
    return paths.filter { $0.hasSuffix(".folio-tmp") }
  }

  @Test func filesSwappedOutInSeveralFoldersAreAllGoneAfterFinish() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let folders = ["a", "b/c", "d"]
    let paths = folders.flatMap { folder in (0..<200).map { "\(folder)/k\($0).json" } }
    let first = WorkTree(root: scratch.path)
    for path in paths { try first.write(path, content: Array("old \(path)".utf8), mode: 0o100644) }

    let unlinks = DeferredUnlinks(threads: 3)
    do {
      // The work tree moves from folder to folder, dropping its hold on
      // each while unlinks in it are still pending.
      let second = WorkTree(root: scratch.path, unlinks: unlinks)
      for path in paths { try second.write(path, content: Array("new \(path)".utf8), mode: 0o100644) }
    }
    try unlinks.finish()

    #expect(leftovers(scratch.path) == [])
    for path in paths { #expect(scratch.read(path) == "new \(path)") }
    try unlinks.finish()  // a second call has nothing left to wait for
  }

  @Test func aFailedUnlinkIsThrownByFinishOnceAndAMissingFileIsNoError() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write("folder/inside.txt", "x")
    let descriptor = open(scratch.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    try #require(descriptor >= 0)
    let root = OpenFolder(owning: descriptor)

    let unlinks = DeferredUnlinks(threads: 2)
    unlinks.unlink("missing", in: root, path: "missing")
    unlinks.unlink("folder", in: root, path: scratch.path + "/folder")
    let error = try #require(throws: FolioError.self) { try unlinks.finish() }
    #expect(error.path == scratch.path + "/folder")
    #expect(error.function == "unlinkat")
    #expect(scratch.exists("folder/inside.txt"))
    try unlinks.finish()
  }
}
