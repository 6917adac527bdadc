import Folio
import FolioTestSupport
import Foundation
import Testing

/// `folio import`'s `--batch-size`, `-m` and how its commit is written.
struct ImportOptionsCLITests {
  static let yaml = """
    version: 1
    tables:
      small:
        path: small
      large:
        path: large
    """

  private func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    return scratch
  }

  /// The loose objects in the repository (`.git/objects/??/*`).
  private func looseObjects(in scratch: CLIScratch) throws -> Set<String> {
    let objects = scratch.path + "/.git/objects"
    var found = Set<String>()
    for folder in try FileManager.default.contentsOfDirectory(atPath: objects) where folder.count == 2 {
      for name in try FileManager.default.contentsOfDirectory(atPath: objects + "/" + folder) {
        found.insert(folder + name)
      }
    }
    return found
  }

  @Test(arguments: ["0", "-3", "ten", ""])
  func batchSizeMustBeAPositiveInteger(_ value: String) throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("in.ndjson", #"{"id":"a"}"# + "\n")
    let result = try scratch.folio("import", "small", "in.ndjson", "--batch-size", value)
    #expect(result.status == 64)
    #expect(result.stderr.contains("--batch-size needs a positive integer"))
    #expect(result.stderr.contains("Usage: folio import"))
    #expect(try scratch.folio("export", "small").stdout.isEmpty)
  }

  @Test func batchSizeIsDocumented() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let help = try scratch.folio("import", "--help").stdout
    #expect(help.contains("--batch-size N        Rows in flight (default: 2048)"))
  }

  /// A batch of one row and one larger than the input give the same
  /// documents, ops and summary: the size bounds memory, nothing else.
  @Test func smallAndLargeBatchesGiveTheSameResult() throws {
    let scratch = try store()
    defer { scratch.remove() }
    var text = ""
    for i in 0..<300 {
      // Repeated pks (upsert), so staged documents are read back mid-import.
      text +=
        #"{"id":"r\#(i % 120)","v\#(i % 7)":\#(i),"body":"\#(String(repeating: "é", count: i % 50))"}"# + "\n"
    }
    try scratch.write("in.ndjson", text)
    let small = try scratch.folio(
      "import", "small", "in.ndjson", "--mode", "upsert", "--batch-size", "1", "--json")
    let large = try scratch.folio(
      "import", "large", "in.ndjson", "--mode", "upsert", "--batch-size", "100000", "--json")
    #expect(small.status == 0, "\(small.stderr)")
    #expect(large.status == 0, "\(large.stderr)")
    func summary(_ result: FolioRunner.Result) throws -> JSONObject {
      var object = try #require(try JSONValue(parsing: result.stdout).objectValue)
      object["commit"] = nil
      object["seconds"] = nil
      object["table"] = nil
      return object
    }
    #expect(try summary(small) == summary(large))
    #expect(try summary(small)["created"] == 120)
    let smallRows = try scratch.folio("export", "small").stdout
    #expect(smallRows.split(separator: "\n").count == 120)
    #expect(smallRows == (try scratch.folio("export", "large").stdout))
    // The same ops, in the same order (their stamps aside).
    func ops(_ table: String) throws -> [String] {
      try scratch.folio("log", table).stdout.split(separator: "\n").map { line in
        let op = try #require(try JSONValue(parsing: String(line)).objectValue)
        return "\(op["op"]?.compactString ?? "") \(op["pk"]?.compactString ?? "")"
      }
    }
    #expect(try ops("small").count >= 120)
    #expect(try ops("small") == ops("large"))
    #expect(try scratch.git("status --porcelain --untracked-files=no").isEmpty)
  }

  /// `-m` names the import's commit, and every object the import writes
  /// (documents, trees, the op log, the commit) goes into packs: not one
  /// file appears under `.git/objects/??/`.
  @Test func messageNamesTheCommitAndNoLooseObjectsAreWritten() throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("commit", "-m", "config").status == 0)
    var text = ""
    for i in 0..<500 { text += #"{"id":"r\#(i)","v":\#(i)}"# + "\n" }
    try scratch.write("in.ndjson", text)
    let before = try looseObjects(in: scratch)
    let result = try scratch.folio(
      "import", "small", "in.ndjson", "-m", "Load the small table\n\nFrom in.ndjson.")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try scratch.git("log -1 --format=%B") == "Load the small table\n\nFrom in.ndjson.\n")
    #expect(try scratch.git("log -1 --format=%s") == "Load the small table\n")
    #expect(try looseObjects(in: scratch) == before)
    #expect(try scratch.git("ls-files small").split(separator: "\n").count == 500)
    #expect(try scratch.git("fsck").isEmpty)
    // A second import, into a table folder that exists (the long form of -m).
    text = ""
    for i in 0..<5 { text += #"{"id":"z\#(i)"}"# + "\n" }
    try scratch.write("more.ndjson", text)
    #expect(try scratch.folio("import", "small", "more.ndjson", "--message", "Second").status == 0)
    #expect(try scratch.git("log -1 --format=%s") == "Second\n")
    #expect(try looseObjects(in: scratch) == before)
    #expect(try scratch.git("ls-files small").split(separator: "\n").count == 505)
    #expect(try scratch.git("status --porcelain --untracked-files=no").isEmpty)
    #expect(try scratch.git("fsck").isEmpty)
  }

  /// An input path the user names may be a symlink to a file, which is read
  /// as that file, or a FIFO, whose bytes can be read only once: the import
  /// keeps a copy as it reads, and must open the FIFO only once.
  @Test func inputMayBeASymlinkOrAFIFO() throws {
    let scratch = try store()
    defer { scratch.remove() }
    var text = ""
    for i in 0..<200 { text += #"{"id":"r\#(i)","v":\#(i)}"# + "\n" }
    try scratch.write("rows.ndjson", text)
    #expect(symlink(scratch.path + "/rows.ndjson", scratch.path + "/link.ndjson") == 0)
    let linked = try scratch.folio("import", "small", "link.ndjson")
    #expect(linked.status == 0, "\(linked.stderr)")
    #expect(try scratch.git("ls-files small").split(separator: "\n").count == 200)

    let fifo = scratch.path + "/rows.fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: "/bin/sh")
    writer.arguments = ["-c", "cat \"$0\" > \"$1\"", scratch.path + "/rows.ndjson", fifo]
    try writer.run()
    let piped = try scratch.folio("import", "large", "rows.fifo")
    writer.waitUntilExit()
    #expect(piped.status == 0, "\(piped.stderr)")
    #expect(writer.terminationStatus == 0)
    #expect(try scratch.git("ls-files large").split(separator: "\n").count == 200)
  }
}
