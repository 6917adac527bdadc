import Folio
import FolioCore
import FolioTestSupport
import Foundation
import Testing

@testable import FolioGit

/// The name rules of ``TreePathValidator``, table-driven: git's own
/// (`verify_path`, `is_ntfs_dotgit`, `is_hfs_dotgit`) and Folio's.
@Suite struct TreePathValidatorTests {
  static let blob: UInt32 = 0o100644
  static let link: UInt32 = 0o120000

  @Test(arguments: [
    "", ".", "..", "a/b", "a\\b", ".git", ".GIT", ".Git", "git~1", "GIT~1", ".git.", ".git ", ".git. . ",
    ".git::$INDEX_ALLOCATION", ".g\u{200C}it", "\u{FEFF}.git", ".d1.json.folio-tmp",
    String(repeating: "x", count: 245),
  ])
  func refused(_ name: String) {
    #expect(
      TreePathValidator.problem(name: Array(name.utf8), mode: Self.blob) != nil, "\(name.debugDescription)")
  }

  @Test(arguments: [
    "a", ".gitx", "git", "git~2", "x.git", ".github", ".gitmodules", ".gitignore", "t.json", "..x", "...",
    String(repeating: "x", count: 244),
  ])
  func accepted(_ name: String) {
    #expect(
      TreePathValidator.problem(name: Array(name.utf8), mode: Self.blob) == nil, "\(name.debugDescription)")
  }

  @Test func gitControlFilesMustNotBeSymlinks() {
    for name in [
      ".gitmodules", ".GITMODULES", ".gitmodules.", "gitmod~1", ".gitattributes", ".gitignore", ".mailmap",
    ] {
      #expect(TreePathValidator.problem(name: Array(name.utf8), mode: Self.link) != nil, "\(name)")
    }
    #expect(TreePathValidator.problem(name: Array("docs-link".utf8), mode: Self.link) == nil)
  }

  @Test func onlyGitsModes() {
    #expect(TreePathValidator.problem(name: Array("a".utf8), mode: 0o100600) != nil)
    for mode: UInt32 in [0o100644, 0o100755, 0o120000, 0o160000, 0o040000] {
      #expect(TreePathValidator.problem(name: Array("a".utf8), mode: mode) == nil)
    }
    // A folder's name only needs NAME_MAX: no temp file is made for it.
    #expect(
      TreePathValidator.problem(name: Array(String(repeating: "d", count: 255).utf8), mode: 0o040000) == nil)
  }

  @Test func linksInFolioFoldersAreRefused() throws {
    let config = Config(tables: [TableConfig(name: "todos", path: "data/todos")])
    let owner = { (path: String) in
      TreePathValidator.owner(of: path, config: config)
    }
    #expect(owner("data/todos/a.json") != nil)
    #expect(owner("data") != nil, "a link on the way to a table")
    #expect(owner("data/todos") != nil)
    #expect(owner(".folio/ops/r.ndjson") != nil)
    #expect(owner("folio.yaml") != nil)
    #expect(owner("docs/link") == nil)
    #expect(owner("data/todos2") == nil)
  }
}

/// ``TreePathValidator/duplicateName(in:)`` on trees written byte for byte
/// (`git hash-object --literally`), as an attacker writes them: git's own
/// tools sort entries and refuse duplicates, so they could not make these.
@Suite struct TreeDuplicateNameTests {
  /// Writes a tree of `entries` (mode, name) in the order given, each
  /// pointing at one blob, and returns the duplicate name found, if any.
  static func duplicate(in entries: [(mode: String, name: String)]) throws -> String? {
    let scratch = Scratch()
    defer { scratch.remove() }
    try shellGit("init -q .", in: scratch.path)
    let blob = try shellGit("hash-object -w --stdin </dev/null", in: scratch.path).output
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let raw = try #require(GitOID(hex: blob))
    var bytes: [UInt8] = []
    for entry in entries {
      bytes += Array("\(entry.mode) \(entry.name)".utf8) + [0] + raw.bytes
    }
    _ = FileManager.default.createFile(atPath: scratch.path + "/tree.raw", contents: Data(bytes))
    let written = try shellGit("hash-object -t tree --literally -w tree.raw", in: scratch.path)
    #expect(written.status == 0, "\(written.output)")
    let repository = try #require(try GitRepository.open(workTree: scratch.path))
    let tree = try repository.tree(
      try #require(GitOID(hex: written.output.trimmingCharacters(in: .whitespacesAndNewlines))))
    return TreePathValidator.duplicateName(in: tree).map { String(decoding: $0, as: UTF8.self) }
  }

  @Test func aSortedFolderOfDistinctNamesHasNone() throws {
    #expect(
      try Self.duplicate(in: [("100644", "a"), ("100644", "a.json"), ("40000", "b"), ("100644", "c")]) == nil)
  }

  @Test func twoEntriesOfOneNameSideBySide() throws {
    #expect(try Self.duplicate(in: [("100644", "a"), ("100644", "x"), ("100644", "x")]) == "x")
    #expect(try Self.duplicate(in: [("100644", "x"), ("160000", "x")]) == "x")
  }

  @Test func aFileAndAFolderOfOneNameApart() throws {
    // git's order puts "x.json" between the file "x" and the folder "x"
    // (compared as "x/").
    #expect(try Self.duplicate(in: [("100644", "x"), ("100644", "x.json"), ("40000", "x")]) == "x")
    #expect(try Self.duplicate(in: [("120000", "x"), ("100644", "x-y"), ("40000", "x")]) == "x")
  }

  @Test func anUnsortedFolderIsCheckedNameByName() throws {
    #expect(try Self.duplicate(in: [("100644", "b"), ("100644", "a"), ("100644", "b")]) == "b")
    #expect(try Self.duplicate(in: [("100644", "b"), ("100644", "a")]) == nil)
  }
}
