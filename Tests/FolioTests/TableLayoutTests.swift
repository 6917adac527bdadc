import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioGit

/// The hashed and nested layouts (``TableLayout``): where a document's
/// file goes, that git stores a table as a folder of folders, and that converting a
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

  /// The YAML of a store whose table `todos` has `layout`.
  static func yaml(_ layout: TableLayout) -> String {
    yaml.replacingOccurrences(of: "    layout: hashed\n", with: "    layout: \(layout.rawValue)\n")
  }

  /// The folders `sha1sum` of the pk's bytes gives in `layout`: what the
  /// docs tell users to run to find a file (`cut -c1-2`, `cut -c3`).
  static func sha1sumFolder(_ pk: String, _ layout: TableLayout) throws -> String {
    let digest = try SHA1Tests.sha1sum(Array(pk.utf8))
    return layout == .nested
      ? digest.prefix(2) + "/" + digest.dropFirst(2).prefix(1) : String(digest.prefix(2))
  }

  @Test(arguments: [TableLayout.hashed, .nested])
  func aDocumentsFolderIsTheStartOfTheSHA1OfItsPK(layout: TableLayout) throws {
    let hashed = TableConfig(name: "t", layout: layout)
    for pk in ["a", "d3", "Zürich", "a/b", "%", "100", String(repeating: "x", count: 200), "🙂"] {
      let bucket = try Self.sha1sumFolder(pk, layout)
      #expect(layout.folder(of: pk) == bucket, "\(pk)")
      let name = try hashed.documentName(for: pk)
      #expect(name == bucket + "/" + (try PrimaryKey.fileName(for: pk)))
      #expect(hashed.pk(fromDocumentName: name) == pk)
      // Anywhere else the file is no document of the table.
      #expect(hashed.pk(fromDocumentName: try PrimaryKey.fileName(for: pk)) == nil)
      let other = bucket.hasPrefix("00") ? "01" + bucket.dropFirst(2) : "00" + bucket.dropFirst(2)
      #expect(hashed.pk(fromDocumentName: other + "/" + (try PrimaryKey.fileName(for: pk))) == nil)
      #expect(
        hashed.pk(fromDocumentName: bucket.uppercased() + "/" + (try PrimaryKey.fileName(for: pk))) == nil
          || bucket.uppercased() == bucket)
      #expect(TableConfig(name: "t", layout: .flat).pk(fromDocumentName: name) == nil)
      let otherLayout = TableConfig(name: "t", layout: layout == .nested ? .hashed : .nested)
      #expect(otherLayout.pk(fromDocumentName: name) == nil)
    }
  }

  @Test(arguments: [TableLayout.hashed, .nested])
  func aHashedTableIsAFolderOfFoldersInGitAndTheStoreHidesIt(layout: TableLayout) throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml(layout))
    defer { scratch.remove() }
    try store.write { transaction in
      for k in 0..<300 {
        _ = try transaction.put(table: "todos", pk: "d\(k)", document: ["n": .integer(Int64(k))])
      }
    }
    try store.commit(message: "start")
    // Every file in its subfolder, none in the table's folder itself.
    let top = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/data/todos")
    #expect(top.allSatisfy { layout.isFolder($0, level: 0) })
    #expect(scratch.exists("data/todos/" + layout.folder(of: "d7") + "/d7.json"))
    let tree = try git(["ls-tree", "HEAD:data/todos"], in: scratch.path).output
    let lines = tree.split(separator: "\n")
    #expect(lines.count == top.count && lines.allSatisfy { $0.contains(" tree ") })
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.isEmpty)
    #expect(try store.collection("todos").count() == 300)
    #expect(try store.collection("todos").findByID("d7").exec()?["n"] == .integer(7))

    // A file saved by hand in its subfolder is an edit; elsewhere it is
    // not the document, and fsck says where it belongs.
    let place = "data/todos/" + layout.folder(of: "d7") + "/d7.json"
    try scratch.write(place, "{\"id\": \"d7\", \"n\": 70}\n")
    try scratch.write("data/todos/d8.json", "{\"id\": \"d8\", \"n\": 80}\n")
    let status = try store.status()
    #expect(status.tables.first { $0.name == "todos" }?.changedDocuments == ["d7"])
    let problems = try store.check()
    let misplaced = problems.first { $0.location?.file == "data/todos/d8.json" }
    #expect(
      misplaced?.message.contains("move it to 'data/todos/\(layout.folder(of: "d8"))/d8.json'") == true)
    let summary = try store.commit(message: "edit")
    #expect(summary.commit != nil)
    #expect(try git(["show", "--name-only", "--format=", "HEAD"], in: scratch.path).output.contains(place))
    #expect(try store.collection("todos").findByID("d7").exec()?["n"] == .integer(70))

    // A commit of one document writes its folders' trees and the table's,
    // not a tree of every document.
    try store.write { _ = try $0.put(table: "todos", pk: "d9", document: ["n": 99]) }
    try store.commit(message: "one")
    let changedTrees = try git(["diff-tree", "-t", "-r", "--name-only", "HEAD~1", "HEAD"], in: scratch.path)
      .output
    #expect(
      changedTrees.split(separator: "\n").filter { $0.hasPrefix("data/todos") }.count == 2 + layout.depth,
      "\(changedTrees)")

    // Removing the last document of a subfolder leaves no empty tree.
    try store.write { transaction in
      for k in 0..<300 { _ = try transaction.remove(table: "todos", pk: "d\(k)") }
    }
    try store.commit(message: "empty")
    #expect(try git(["ls-tree", "-r", "HEAD"], in: scratch.path).output.contains("data/todos") == false)
    #expect(try store.collection("todos").count() == 0)
  }

  @Test(arguments: [TableLayout.hashed, .nested])
  func aConvertedTableMovesAsOneCommitAndMergesWhatTheOtherReplicaWroteFlat(layout: TableLayout) throws {
    // Flat by name, so that the suite's run over hashed tables leaves it flat.
    let flatYAML = Self.yaml(.flat)
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
    let (converted, commit) = try first.setLayout(layout, of: "todos")
    #expect(commit != nil)
    #expect(try converted.table(named: "todos").layout == layout)
    let moves = try git(["show", "-M", "--name-status", "--format=", "HEAD"], in: first.rootPath).output
    let documentLines = moves.split(separator: "\n").filter { $0.contains("data/todos/") }
    #expect(documentLines.count == 40 && documentLines.allSatisfy { $0.hasPrefix("R100") }, "\(moves)")
    #expect(try converted.collection("todos").count() == 40)
    #expect(try converted.setLayout(layout, of: "todos").commit == nil)
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
      #expect(try store.table(named: "todos").layout == layout)
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
        files.allSatisfy { TableConfig(name: "t", path: "data/todos", layout: layout).document(inPath: $0) })
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
    // The other replica takes it: its sync's checkout removes the folders
    // it emptied, as git's does, so fsck finds nothing in the way.
    try flat.sync()
    try Store(at: URL(fileURLWithPath: second.rootPath)).sync()
    let secondFlat = try Store(at: URL(fileURLWithPath: second.rootPath))
    #expect(try secondFlat.table(named: "todos").layout == .flat)
    let entries = try FileManager.default.contentsOfDirectory(atPath: second.rootPath + "/data/todos")
    #expect(entries.count == 40 && entries.allSatisfy { $0.hasSuffix(".json") }, "\(entries.sorted())")
    #expect(try secondFlat.check().isEmpty)
  }
}

extension TableConfig {
  /// Whether `path`, relative to the store root, is the file of one of
  /// this table's documents.
  fileprivate func document(inPath path: Substring) -> Bool {
    path.hasPrefix(self.path + "/") && pk(fromDocumentName: path.dropFirst(self.path.count + 1)) != nil
  }
}
