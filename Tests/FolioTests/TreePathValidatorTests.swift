import Folio
import FolioCore
import FolioTestSupport
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
