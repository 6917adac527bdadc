import Folio
import FolioTestSupport
import Foundation
import Glibc
import Testing

/// The nested layout as users meet it: the default of a table made by
/// `folio init`, `tables add` and `import --create`, hidden by `get`,
/// `put`, `export` and the watcher, and `folio tables layout` to convert.
struct TableLayoutCLITests {
  static let nested = TableConfig(name: "todos", path: "data/todos", layout: .nested)
  static let hashed = TableConfig(name: "todos", path: "data/todos", layout: .hashed)

  @Test func newTablesAreNestedAndEveryCommandHidesIt() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let made = try scratch.folio("init", "--table", "todos")
    #expect(made.status == 0, "\(made.stderr)")
    #expect(
      scratch.read("folio.yaml")?.contains("layout: nested") == true, "\(scratch.read("folio.yaml") ?? "")")
    #expect(try scratch.folio("put", "todos", "a", "-", input: #"{"title": "first"}"#).status == 0)
    let place = try Self.nested.path(of: "a")
    #expect(place.split(separator: "/").count == 5, "\(place)")
    #expect(scratch.read(place)?.contains("first") == true)
    #expect(try scratch.folio("get", "todos", "a").stdout.contains("first"))
    // Where a document's file is, or where a new one goes.
    #expect(try scratch.folio("get", "todos", "a", "--path").stdout == place + "\n")
    #expect(
      try scratch.folio("get", "todos", "new", "--path").stdout == (try Self.nested.path(of: "new")) + "\n")
    #expect(try scratch.folio("get", "todos", "a", "--path", "--as-of", "HEAD").status == 64)
    // git routes the table's files, two levels down, to Folio's drivers.
    let attributes = try git(["check-attr", "merge", "diff", "--", place], in: scratch.path).output
    #expect(attributes.contains("merge: folio") && attributes.contains("diff: folio"), "\(attributes)")
    #expect(try scratch.folio("commit", "-m", "a").status == 0)
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.isEmpty)

    // A file saved in the table's folder itself is not where the layout
    // keeps documents: fsck says where it belongs, and nothing reads it.
    try scratch.write("data/todos/b.json", #"{"id": "b"}"#)
    let fsck = try scratch.folio("fsck")
    #expect(fsck.status != 0)
    let home = try Self.nested.path(of: "b")
    #expect(
      fsck.stderr.contains("data/todos/b.json:1:1: error: document 'b' is not where table 'todos'")
        && fsck.stderr.contains("move it to '\(home)'"), "\(fsck.stderr)")
    #expect(try scratch.folio("get", "todos", "b").status != 0)
    try FileManager.default.removeItem(atPath: scratch.path + "/data/todos/b.json")

    let added = try scratch.folio("tables", "add", "flatones", "--layout", "flat")
    #expect(added.status == 0 && !added.stdout.contains("layout:"), "\(added.stdout)")
    #expect(
      try scratch.folio("tables", "add", "x", "--layout", "round").stderr.contains("flat, hashed or nested"))
  }

  @Test(.enabled(if: PublicData.penguinsCSV != nil, PublicData.missingReason))
  func anImportIntoANewTableIsNestedAndExportsAsAFlatOneDoes() throws {
    let csv = try #require(PublicData.penguinsCSV)
    var exports: [String] = []
    for layout in TableLayout.allCases {
      let scratch = try CLIScratch(yaml: nil)
      defer { scratch.remove() }
      #expect(try scratch.folio("init").status == 0)
      let imported = try scratch.folio(
        "import", "penguins", csv, "--create", "--null", "NA", "--layout", layout.rawValue)
      #expect(imported.status == 0, "\(imported.stderr)")
      let tree = try git(["ls-tree", "HEAD:data/penguins"], in: scratch.path).output.split(separator: "\n")
      if layout != .flat {
        #expect(tree.count > 100 && tree.allSatisfy { $0.contains(" tree ") })
        let files = try git(["ls-files", "data/penguins"], in: scratch.path).output.split(separator: "\n")
        #expect(files.count == 344)
        let table = TableConfig(name: "penguins", path: "data/penguins", layout: layout)
        #expect(files.allSatisfy { table.pk(fromDocumentName: $0.dropFirst("data/penguins/".count)) != nil })
        #expect(files.allSatisfy { $0.split(separator: "/").count == 3 + layout.depth }, "\(layout)")
      } else {
        #expect(tree.count == 344)
      }
      #expect(try git(["status", "--porcelain"], in: scratch.path).output.isEmpty)
      #expect(try scratch.folio("fsck").status == 0)
      let export = try scratch.folio("export", "penguins", "--format", "csv")
      #expect(export.status == 0)
      exports.append(export.stdout)
    }
    #expect(exports[0] == exports[1] && exports[1] == exports[2])
    #expect(exports[0].split(separator: "\n").count == 345)
  }

  @Test(arguments: [TableLayout.nested, .hashed])
  func theWatcherRecordsSavesInSubfoldersEvenOnesMadeAfterItStarted(layout: TableLayout) throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    #expect(try scratch.folio("init", "--table", "todos", "--layout", layout.rawValue).status == 0)
    #expect(try scratch.folio("put", "todos", "a", "-", input: #"{"title": "x"}"#).status == 0)
    #expect(try scratch.folio("commit", "-m", "start").status == 0)
    let watch = try WatchProcess(in: scratch.path)
    let folder = scratch.path + "/data/todos"
    let table = TableConfig(name: "todos", path: "data/todos", layout: layout)

    Save.tempThenRename(scratch.path + "/" + (try table.path(of: "a")), #"{"id": "a", "title": "y"}"#)
    #expect(watch.waitFor(1 + watch.fences, "op"))
    #expect(watch.fence(in: folder, layout: layout))
    // A new document whose folders do not exist yet: made, outermost
    // first, then saved into, as `mkdir -p` and an editor would.
    var pk = "n0"
    var k = 0
    while FileManager.default.fileExists(atPath: folder + "/" + layout.folder(of: pk).prefix(2)) {
      k += 1
      pk = "n\(k)"
    }
    var made = folder
    for name in layout.folder(of: pk).split(separator: "/") {
      made += "/" + name
      #expect(mkdir(made, 0o755) == 0)
    }
    Save.inPlace(made + "/" + pk + ".json", #"{"id": "\#(pk)", "title": "new"}"#)
    #expect(watch.waitFor(2 + watch.fences, "op"), "\(watch.outputText)")
    #expect(watch.fence(in: folder, layout: layout))
    #expect(watch.stop() == 0)
    let summary = watch.opsWithoutFences.map { "\($0["op"]!) \($0["pk"]!)" }
    #expect(summary == ["update a", "insert \(pk)"], "\(watch.outputText)")
    #expect(try scratch.folio("get", "todos", pk).stdout.contains("new"))
  }

  @Test func tablesLayoutConvertsWithOneCommitOfMoves() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    #expect(try scratch.folio("init", "--table", "todos", "--layout", "flat").status == 0)
    for k in 0..<12 {
      #expect(try scratch.folio("put", "todos", "d\(k)", "-", input: #"{"n": \#(k)}"#).status == 0)
    }
    #expect(try scratch.folio("commit", "-m", "start").status == 0)
    #expect(scratch.read("data/todos/d3.json") != nil)
    // A pending edit is committed first, then moved with the rest.
    #expect(try scratch.folio("put", "todos", "d3", "-", input: #"{"n": 33}"#).status == 0)
    let converted = try scratch.folio("tables", "layout", "todos", "nested")
    #expect(converted.status == 0, "\(converted.stderr)")
    #expect(converted.stdout.contains("moved the 12 document(s) of table 'todos' to the nested layout"))
    #expect(scratch.read(try Self.nested.path(of: "d3"))?.contains("33") == true)
    #expect(scratch.read("data/todos/d3.json") == nil)
    let moves = try git(["show", "-M", "--name-status", "--format=", "HEAD"], in: scratch.path).output
    #expect(moves.split(separator: "\n").filter { $0.hasPrefix("R100\tdata/todos/") }.count == 12, "\(moves)")
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.isEmpty)
    #expect(try scratch.folio("fsck").status == 0)
    #expect(try scratch.folio("tables", "layout", "todos", "nested").stdout.contains("nothing to do"))
    // One level up: the inner folders go, empty.
    #expect(try scratch.folio("tables", "layout", "todos", "hashed").status == 0)
    #expect(scratch.read(try Self.hashed.path(of: "d3"))?.contains("33") == true)
    let folders = try FileManager.default.subpathsOfDirectory(atPath: scratch.path + "/data/todos")
    #expect(folders.allSatisfy { $0.split(separator: "/").count == 1 || $0.hasSuffix(".json") }, "\(folders)")
    #expect(try git(["status", "--porcelain"], in: scratch.path).output.isEmpty)
    #expect(try scratch.folio("fsck").status == 0)
    // And flat again: no folder is left.
    #expect(try scratch.folio("tables", "layout", "todos", "flat").status == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/data/todos").count == 12)
    #expect(try scratch.folio("fsck").status == 0)
    #expect(try scratch.folio("tables", "layout", "todos", "wide").status != 0)
  }
}
