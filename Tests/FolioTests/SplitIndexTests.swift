import FolioCore
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioGit

/// Split indexes (``GitIndexFile+Split``): what git writes, Folio reads;
/// what Folio writes, git and libgit2 read; checked against
/// `git ls-files --stage`, which merges the two files itself.
@Suite(.serialized)
struct SplitIndexTests {
  /// A plain git repository with `count` files, `f00.txt`…, staged.
  static func repository(files count: Int) throws -> Scratch {
    let scratch = Scratch()
    _ = try git(["init", "-q", "-b", "main"], in: scratch.path)
    for i in 0..<count { try scratch.write(String(format: "f%02d.txt", i), "file \(i)\n") }
    _ = try git(["add", "."], in: scratch.path)
    return scratch
  }

  /// `git ls-files --stage`, one line per entry: mode, id, stage, path.
  static func gitEntries(_ path: String) throws -> [String] {
    try git(["ls-files", "--stage"], in: path).output.split(separator: "\n").map(String.init)
  }

  /// The same lines from Folio's reader.
  static func folioEntries(_ path: String) throws -> [String] {
    let file = try #require(try GitIndexFile.open(path + "/.git/index"))
    return file.entries.map { entry in
      String(entry.word(24), radix: 8) + " \(entry.id) \(entry.stage)\t"
        + String(decoding: entry.path, as: UTF8.self)
    }
  }

  /// Files in `.git` named `sharedindex.*`.
  static func sharedIndexes(_ path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path + "/.git").filter {
      $0.hasPrefix("sharedindex.")
    }
  }

  /// An edit that stages `name` as the file holds it now (nil: removes it).
  static func edit(_ name: String, in scratch: Scratch, repository: GitRepository) throws -> GitIndex.Edit {
    guard let text = scratch.read(name) else { return GitIndex.Edit(path: name, entry: nil) }
    let id = try repository.writeBlob(Array(text.utf8))
    return GitIndex.Edit(path: name, entry: GitIndex.entry(id: id, filePath: scratch.path + "/" + name))
  }

  @Test func aSplitIndexGitWroteReadsAsGitReadsIt() throws {
    let scratch = try Self.repository(files: 40)
    defer { scratch.remove() }
    _ = try git(["update-index", "--split-index"], in: scratch.path)
    // Replaced (git leaves their paths out), deleted and added entries.
    for i in [3, 17, 30] { try scratch.write(String(format: "f%02d.txt", i), "changed \(i)\n") }
    for name in ["a.txt", "f17b.txt", "z.txt"] { try scratch.write(name, "new \(name)\n") }
    _ = try git(["add", "."], in: scratch.path)
    _ = try git(["rm", "-q", "--cached", "f05.txt", "f31.txt"], in: scratch.path)
    #expect(try Self.sharedIndexes(scratch.path).count == 1)
    let file = try #require(try GitIndexFile.open(scratch.path + "/.git/index"))
    #expect(file.isSplit)
    // Git left the replaced entries' paths out (every entry `git add .`
    // refreshed): they come from the shared ones.
    #expect(!file.entries.replacedPaths.isEmpty)
    #expect(try Self.folioEntries(scratch.path) == Self.gitEntries(scratch.path))
  }

  @Test(arguments: [SplitIndexPolicy.always, .never])
  func aRewriteOfAGitSplitIndexIsOneGitReads(policy: SplitIndexPolicy) throws {
    let scratch = try Self.repository(files: 30)
    defer { scratch.remove() }
    _ = try git(["update-index", "--split-index"], in: scratch.path)
    try scratch.write("f04.txt", "changed\n")
    _ = try git(["add", "f04.txt"], in: scratch.path)
    let repository = try #require(try GitRepository.open(workTree: scratch.path))
    // Change one git replaced, one shared, remove one, add two.
    try scratch.write("f04.txt", "changed again\n")
    try scratch.write("f10.txt", "changed\n")
    try scratch.write("b.txt", "new\n")
    try scratch.write("f99.txt", "new\n")
    unlink(scratch.path + "/f20.txt")
    let edits = try ["b.txt", "f04.txt", "f10.txt", "f20.txt", "f99.txt"].map {
      try Self.edit($0, in: scratch, repository: repository)
    }
    let file = try #require(try GitIndexFile.open(scratch.path + "/.git/index"))
    try file.write(to: scratch.path + "/.git/index", applying: edits, policy: policy)
    let after = try #require(try GitIndexFile.open(scratch.path + "/.git/index"))
    #expect(after.isSplit == (policy == .always))
    #expect(try Self.folioEntries(scratch.path) == Self.gitEntries(scratch.path))
    #expect(try git(["diff", "--name-only"], in: scratch.path).output.isEmpty)
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.split(separator: "\n").count == 31)
    // libgit2 reads it too, once written whole.
    let libgit2 = try repository.index()
    try libgit2.readFromDisk()
    #expect(libgit2.entries.count == 31)
    #expect(try !#require(try GitIndexFile.open(scratch.path + "/.git/index")).isSplit)
    #expect(try Self.folioEntries(scratch.path) == Self.gitEntries(scratch.path))
  }

  @Test func aWholeIndexBecomesTheSharedOneAndPastTheLimitANewOneIsWritten() throws {
    let scratch = try Self.repository(files: 20)
    defer { scratch.remove() }
    let indexPath = scratch.path + "/.git/index"
    let repository = try #require(try GitRepository.open(workTree: scratch.path))
    let whole = try #require(try GitIndexFile.open(indexPath))
    let checksum = whole.checksum
    try scratch.write("f01.txt", "one\n")
    try whole.write(
      to: indexPath, applying: [try Self.edit("f01.txt", in: scratch, repository: repository)],
      policy: .always,
      reshareAbove: 2)
    // The whole file, linked: named by its own hash.
    #expect(try Self.sharedIndexes(scratch.path) == ["sharedindex." + SHA1.hex(checksum)])
    var st = stat()
    #expect(lstat(scratch.path + "/.git/sharedindex." + SHA1.hex(checksum), &st) == 0 && st.st_nlink == 1)
    #expect(try Self.folioEntries(scratch.path) == Self.gitEntries(scratch.path))
    // Three changes since the shared index: past the limit of two.
    for name in ["f02.txt", "f03.txt"] { try scratch.write(name, "two\n") }
    let split = try #require(try GitIndexFile.open(indexPath))
    #expect(split.isSplit)
    try split.write(
      to: indexPath,
      applying: try ["f02.txt", "f03.txt"].map { try Self.edit($0, in: scratch, repository: repository) },
      policy: .always, reshareAbove: 2)
    let reshared = try #require(try GitIndexFile.open(indexPath))
    #expect(reshared.isSplit)
    #expect(reshared.top.offsets.isEmpty)
    #expect(try Self.sharedIndexes(scratch.path).count == 2)
    #expect(try Self.folioEntries(scratch.path) == Self.gitEntries(scratch.path))
    #expect(try git(["diff", "--name-only"], in: scratch.path).output.isEmpty)
    // A shared index no index names, untouched for two hours, goes at the
    // next new one; the one in use stays.
    let old = "sharedindex." + SHA1.hex(checksum)
    var times = [
      timespec(tv_sec: time(nil) - 7200, tv_nsec: 0), timespec(tv_sec: time(nil) - 7200, tv_nsec: 0),
    ]
    #expect(utimensat(AT_FDCWD, scratch.path + "/.git/" + old, &times, 0) == 0)
    try scratch.write("f04.txt", "three\n")
    try reshared.write(
      to: indexPath, applying: [try Self.edit("f04.txt", in: scratch, repository: repository)],
      policy: .always,
      reshareAbove: 0)
    #expect(try !Self.sharedIndexes(scratch.path).contains(old))
    #expect(try Self.folioEntries(scratch.path) == Self.gitEntries(scratch.path))
    _ = try git(["fsck", "--no-progress"], in: scratch.path)
  }

  @Test func aSplitIndexWithAMissingOrDamagedSharedPartIsAClearError() throws {
    let scratch = try Self.repository(files: 10)
    defer { scratch.remove() }
    _ = try git(["update-index", "--split-index"], in: scratch.path)
    let indexPath = scratch.path + "/.git/index"
    let shared = try #require(try Self.sharedIndexes(scratch.path).first)
    let bytes = try #require(FileManager.default.contents(atPath: indexPath))
    // The shared file gone: the error names it and the fix.
    #expect(rename(scratch.path + "/.git/" + shared, scratch.path + "/.git/kept") == 0)
    let missing = #expect(throws: FolioError.self) { try GitIndexFile.open(indexPath) }
    #expect(missing?.code == .git)
    #expect(missing?.message.contains(shared) == true)
    #expect(missing?.message.contains("git reset") == true)
    #expect(rename(scratch.path + "/.git/kept", scratch.path + "/.git/" + shared) == 0)
    // A bitmap that claims a run of ones far past the shared entries.
    var damaged = [UInt8](bytes)
    let link = try #require(Self.range(of: Array("link".utf8), in: damaged))
    let bitmap = link.upperBound + 4 + 20
    damaged.replaceSubrange((bitmap + 8)..<(bitmap + 16), with: [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])
    #expect(FileManager.default.createFile(atPath: indexPath, contents: Data(damaged)))
    let broken = #expect(throws: FolioError.self) { try GitIndexFile.open(indexPath) }
    #expect(broken?.message.contains("bitmaps are damaged") == true)
  }

  static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
    guard haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count)
    where Array(haystack[start..<(start + needle.count)]) == needle {
      return start..<(start + needle.count)
    }
    return nil
  }

  @Test func bitmapsRoundTripAndHostileOnesAreRefused() throws {
    let seed = testSeed()
    var generator = SplitMix(seed: seed)
    for _ in 0..<200 {
      let limit = Int.random(in: 1...5_000, using: &generator)
      let density = Double.random(in: 0...1, using: &generator)
      let positions = (0..<limit).filter { _ in
        Double.random(in: 0..<1, using: &generator) < density * density
      }
      let bytes = EWAHBitmap.encode(positions)
      let decoded = bytes.withUnsafeBytes { EWAHBitmap.decode($0, limit: limit) }
      #expect(decoded?.positions == positions, "seed \(seed)")
      #expect(decoded?.length == bytes.count, "seed \(seed)")
    }
    // Hostile: a run of 2^32 - 1 words of ones; literal words it does not
    // have; a word count past the end.
    func words(_ values: [UInt64]) -> [UInt8] {
      var bytes: [UInt8] = [0, 0, 0, 64]
      withUnsafeBytes(of: UInt32(values.count).bigEndian) { bytes += $0 }
      for value in values { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
      return bytes + [0, 0, 0, 0]
    }
    for hostile in [words([0x1_FFFF_FFFF]), words([UInt64(5) << 33]), Array(words([0]).dropLast(6))] {
      #expect(hostile.withUnsafeBytes { EWAHBitmap.decode($0, limit: 1_000) } == nil)
    }
  }
}
