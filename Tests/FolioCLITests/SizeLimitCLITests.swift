import Folio
import FolioTestSupport
import Foundation
import Testing

/// One size limit for a document (`limits: document:` in `folio.yaml`, 16
/// MiB at most), checked before the durability point on every path that
/// writes, and reported by `fsck` for a document that got past it.
struct SizeLimitCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
    limits:
      document: 4K

    """

  /// A document of about `bytes` bytes.
  static func document(_ bytes: Int) -> String {
    #"{"title": ""# + String(repeating: "x", count: bytes) + #""}"#
  }

  @Test func everyWriteIsRefusedPastTheLimitAndNothingIsWritten() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    try scratch.folio("init")
    let put = try scratch.folio("put", "todos", "big", input: Self.document(5_000))
    #expect(put.status == 1)
    #expect(
      put.stderr.contains("TOO_LARGE") || put.stderr.contains("more than the store's limit of 4096"),
      "\(put.stderr)")
    #expect(scratch.read("data/todos/big.json") == nil)
    #expect(try scratch.folio("put", "todos", "small", input: Self.document(3_000)).status == 0)
    let apply = try scratch.folio(
      "apply", "todos", "small", "--op", "update", "--columns",
      #"{"more": "\#(String(repeating: "y", count: 2_000))"}"#)
    #expect(apply.status == 1)
    #expect(apply.stderr.contains("more than the store's limit"), "\(apply.stderr)")
    #expect(scratch.read("data/todos/small.json")?.contains("more") == false)
    // Import: a per-row error at the row's line, the others land.
    try scratch.write(
      "rows.ndjson",
      #"{"id": "a", "title": "ok"}"# + "\n" + Self.document(5_000).dropLast() + #", "id": "b"}"# + "\n")
    let imported = try scratch.folio("import", "todos", "rows.ndjson", "--continue")
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stderr.contains("rows.ndjson:2:"), "\(imported.stderr)")
    #expect(imported.stderr.contains("more than the store's limit"), "\(imported.stderr)")
    #expect(scratch.read("data/todos/a.json") != nil && scratch.read("data/todos/b.json") == nil)
    #expect(try scratch.folio("fsck").status == 0)
  }

  @Test func fsckReportsADocumentPastTheLimitAndRmClearsIt() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    try scratch.folio("init")
    #expect(try scratch.folio("put", "todos", "k1", input: #"{"title": "t"}"#).status == 0)
    // Written by hand, or by an older build.
    try scratch.write("data/todos/big.json", Self.document(5_000).dropLast() + #", "id": "big"}"#)
    let fsck = try scratch.folio("fsck")
    #expect(fsck.status == 1)
    #expect(
      (fsck.stdout + fsck.stderr).contains("data/todos/big.json:1:1: error: 5"),
      "\(fsck.stdout)\(fsck.stderr)")
    #expect(try scratch.folio("get", "todos", "k1").status == 0)
    #expect(try scratch.folio("rm", "todos", "big").status == 0)
    #expect(try scratch.folio("fsck").status == 0)
  }

  @Test func theDefaultIs16MiBAndALimitCannotBeRaised() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n")
    defer { scratch.remove() }
    try scratch.folio("init")
    let put = try scratch.folio("put", "todos", "big", input: Self.document(17 << 20))
    #expect(put.status == 1)
    #expect(
      put.stderr.contains(
        "big.json: the document would be 17825825 bytes, more than the store's limit of 16777216 bytes (16M"),
      "\(put.stderr.prefix(300))")
    #expect(scratch.read("data/todos/big.json") == nil)
    try scratch.write(
      "folio.yaml", "version: 1\ntables:\n  todos:\n    path: data/todos\nlimits:\n  document: 64M\n")
    let raised = try scratch.folio("get", "todos", "big")
    #expect(raised.status != 0)
    #expect(
      raised.stderr.contains("folio.yaml:6:13: error: 'document' in 'limits' must be a size from 1K to 16M"),
      "\(raised.stderr)")
  }
}
