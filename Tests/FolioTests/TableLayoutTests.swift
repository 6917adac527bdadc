import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioGit

/// The hashed layout (``TableLayout``): where a document's file goes, that
/// git stores a table as a folder of subfolders, and that converting a
/// table moves its files as one commit that another replica merges with
/// what it wrote in the old layout.
@Suite(.serialized)
struct TableLayoutTests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
        layout: hashed
        columns:
          views: counter
    """

  /// The first two hex digits of `sha1sum` of the pk's bytes: what the
  /// docs tell users to run to find a file.
  static func sha1sumPrefix(_ pk: String) throws -> String {
    String(try SHA1Tests.sha1sum(Array(pk.utf8)).prefix(2))
  }

  @Test func aDocumentsSubfolderIsTheStartOfTheSHA1OfItsPK() throws {
    let hashed = TableConfig(name: "t", layout: .hashed)
    for pk in ["a", "d3", "Zürich", "a/b", "%", "100", String(repeating: "x", count: 200), "🙂"] {
      let bucket = try Self.sha1sumPrefix(pk)
      #expect(TableLayout.bucket(of: pk) == bucket, "\(pk)")
      let name = try hashed.documentName(for: pk)
      #expect(name == bucket + "/" + (try PrimaryKey.fileName(for: pk)))
      #expect(hashed.pk(fromDocumentName: name) == pk)
      // Anywhere else the file is no document of the table.
      #expect(hashed.pk(fromDocumentName: try PrimaryKey.fileName(for: pk)) == nil)
      let other = bucket == "00" ? "01" : "00"
      #expect(hashed.pk(fromDocumentName: other + "/" + (try PrimaryKey.fileName(for: pk))) == nil)
      #expect(
        hashed.pk(fromDocumentName: bucket.uppercased() + "/" + (try PrimaryKey.fileName(for: pk))) == nil
          || bucket.uppercased() == bucket)
      #expect(TableConfig(name: "t", layout: .flat).pk(fromDocumentName: name) == nil)
    }
  }

  @Test func aHashedTableIsAFolderOfSubfoldersInGitAndTheStoreHidesIt() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try store.write { transaction in
      for k in 0..<300 {
        _ = try transaction.put(table: "todos", pk: "d\(k)", document: ["n": .integer(Int64(k))])
      }
    }
    try store.commit(message: "start")
    // Every file in its subfolder, none in the table's folder itself.
    let top = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/data/todos")
    #expect(top.allSatisfy { TableLayout.isBucket($0) })
    #expect(scratch.exists("data/todos/" + TableLayout.bucket(of: "d7") + "/d7.json"))
    let tree = try git(["ls-tree", "HEAD:data/todos"], in: scratch.path).output
    let lines = tree.split(separator: "\n")
    #expect(lines.count == top.count && lines.allSatisfy { $0.contains(" tree ") })
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.isEmpty)
    #expect(try store.collection("todos").count() == 300)
    #expect(try store.collection("todos").findByID("d7").exec()?["n"] == .integer(7))

    // A file saved by hand in its subfolder is an edit; elsewhere it is
    // not the document, and fsck says where it belongs.
    let place = "data/todos/" + TableLayout.bucket(of: "d7") + "/d7.json"
    try scratch.write(place, "{\"id\": \"d7\", \"n\": 70}\n")
    try scratch.write("data/todos/d8.json", "{\"id\": \"d8\", \"n\": 80}\n")
    let status = try store.status()
    #expect(status.tables.first { $0.name == "todos" }?.changedDocuments == ["d7"])
    let problems = try store.check()
    let misplaced = problems.first { $0.location?.file == "data/todos/d8.json" }
    #expect(
      misplaced?.message.contains("move it to 'data/todos/\(TableLayout.bucket(of: "d8"))/d8.json'") == true)
    let summary = try store.commit(message: "edit")
    #expect(summary.commit != nil)
    #expect(try git(["show", "--name-only", "--format=", "HEAD"], in: scratch.path).output.contains(place))
    #expect(try store.collection("todos").findByID("d7").exec()?["n"] == .integer(70))

    // A commit of one document writes its subfolder's tree and the
    // table's, not a tree of every document.
    try store.write { _ = try $0.put(table: "todos", pk: "d9", document: ["n": 99]) }
    try store.commit(message: "one")
    let changedTrees = try git(["diff-tree", "-t", "-r", "--name-only", "HEAD~1", "HEAD"], in: scratch.path)
      .output
    #expect(
      changedTrees.split(separator: "\n").filter { $0.hasPrefix("data/todos") }.count == 3,
      "\(changedTrees)")

    // Removing the last document of a subfolder leaves no empty tree.
    try store.write { transaction in
      for k in 0..<300 { _ = try transaction.remove(table: "todos", pk: "d\(k)") }
    }
    try store.commit(message: "empty")
    #expect(try git(["ls-tree", "-r", "HEAD"], in: scratch.path).output.contains("data/todos") == false)
    #expect(try store.collection("todos").count() == 0)
  }

  @Test func aConvertedTableMovesAsOneCommitAndMergesWhatTheOtherReplicaWroteFlat() throws {
    // Flat by name, so that the suite's run over hashed tables leaves it flat.
    let flatYAML = Self.yaml.replacingOccurrences(of: "    layout: hashed\n", with: "    layout: flat\n")
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let first = try fixture.seed(yaml: flatYAML)
    try first.write { transaction in
      for k in 0..<40 {
        _ = try transaction.put(table: "todos", pk: "d\(k)", document: ["n": .integer(Int64(k)), "views": 1])
      }
    }
    try first.sync()
    let second = try fixture.clone("r1")

    // The first converts; the second, not having seen it, edits flat.
    let (converted, commit) = try first.setLayout(.hashed, of: "todos")
    #expect(commit != nil)
    #expect(try converted.table(named: "todos").layout == .hashed)
    let moves = try git(["show", "-M", "--name-status", "--format=", "HEAD"], in: first.rootPath).output
    let documentLines = moves.split(separator: "\n").filter { $0.contains("data/todos/") }
    #expect(documentLines.count == 40 && documentLines.allSatisfy { $0.hasPrefix("R100") }, "\(moves)")
    #expect(try converted.collection("todos").count() == 40)
    #expect(try converted.setLayout(.hashed, of: "todos").commit == nil)
    try second.write { transaction in
      _ = try transaction.apply(table: "todos", pk: "d3", op: .upsert, columns: ["n": 333])
      _ = try transaction.put(table: "todos", pk: "new", document: ["n": 1])
      _ = try transaction.remove(table: "todos", pk: "d4")
    }
    try second.apply(
      table: "todos", pk: "d3", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
    try converted.apply(
      table: "todos", pk: "d3", op: .update, transforms: ["views": ["op": "increment", "by": 4]])
    try converted.sync()
    try second.sync()
    try converted.sync()

    for store in [converted, try Store(at: URL(fileURLWithPath: second.rootPath))] {
      #expect(try store.table(named: "todos").layout == .hashed)
      let todos = store.collection("todos")
      #expect(try todos.count() == 40)
      #expect(try todos.findByID("d3").exec()?["n"] == .integer(333))
      // Counters add: 1, +1 on the second, +4 on the first.
      let views = try todos.findByID("d3").exec()?["views"]
      #expect(views == .integer(6), "\(String(describing: views))")
      #expect(try todos.findByID("new").exec() != nil)
      #expect(try todos.findByID("d4").exec() == nil)
      let files = try git(["ls-files", "data/todos"], in: store.rootPath).output.split(separator: "\n")
      #expect(files.count == 40)
      #expect(
        files.allSatisfy { TableConfig(name: "t", path: "data/todos", layout: .hashed).document(inPath: $0) })
      #expect(try store.check().isEmpty)
    }

    // And back: flat again, every file directly in the folder.
    let (flat, back) = try converted.setLayout(.flat, of: "todos")
    #expect(back != nil)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: flat.rootPath + "/data/todos").filter {
        $0.hasSuffix(".json")
      }.count == 40)
    #expect(try flat.collection("todos").count() == 40)
    #expect(try flat.check().isEmpty)
  }
}

extension TableConfig {
  /// Whether `path`, relative to the store root, is the file of one of
  /// this table's documents.
  fileprivate func document(inPath path: Substring) -> Bool {
    path.hasPrefix(self.path + "/") && pk(fromDocumentName: path.dropFirst(self.path.count + 1)) != nil
  }
}
