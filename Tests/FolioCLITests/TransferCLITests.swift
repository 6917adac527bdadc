import FolioTestSupport
import Foundation
import Testing

/// End-to-end `folio import` / `folio export`, running the built binary.
struct TransferCLITests {
  static let yaml = """
    version: 1
    tables:
      items:
        path: items
      copy:
        path: copy
      again:
        path: again
      back:
        path: back
    """

  static let rows = [
    #"{"id":"a","name":"Zoë 🚀 日本","note":"line one\nline \"two\"","big":123456789012345678901234567890,"n":null,"nested":{"k":[1,{"x":true}]}}"#,
    #"{"id":"b","name":"plain","note":"","big":-7,"n":1.50,"nested":[]}"#,
    #"{"id":"c","name":"007","note":"a,b","big":0,"n":false,"nested":{}}"#,
  ]

  private func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    return scratch
  }

  private func exported(_ table: String, in scratch: CLIScratch) throws -> [String] {
    let result = try scratch.folio("export", table)
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.split(separator: "\n").map(String.init)
  }

  @Test func helpAndUsage() throws {
    let scratch = try store()
    defer { scratch.remove() }
    for command in ["import", "export"] {
      let help = try scratch.folio(command, "--help")
      #expect(help.status == 0 && help.stdout.contains("USAGE: folio \(command)"))
    }
    #expect(help(try scratch.folio("import", "items")))
    #expect(help(try scratch.folio("import", "items", "x", "--mode", "smash")))
    #expect(help(try scratch.folio("export", "items", "--format", "sqlite")))
    func help(_ result: FolioRunner.Result) -> Bool {
      result.status == 64 && result.stderr.contains("Usage: folio")
    }
  }

  /// NDJSON → store → CSV → store → SQLite → store → NDJSON, and JSON
  /// arrays both ways: the same rows come back, except where CSV turns
  /// nested values into JSON text (documented).
  @Test func roundTripThroughEveryFormat() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("in.ndjson", Self.rows.joined(separator: "\n") + "\n")
    let imported = try scratch.folio("import", "items", "in.ndjson")
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(
      imported.stdout.hasPrefix(
        "imported 3 row(s) into items: 3 created, 0 updated, 0 unchanged, 0 skipped; commit "))
    let original = try exported("items", in: scratch)
    #expect(original == Self.rows.map { try! canonicalCompact($0) })

    // JSON array out and back.
    #expect(try scratch.folio("export", "items", "--format", "json", "-o", "out.json").status == 0)
    #expect(try scratch.folio("import", "again", "out.json").status == 0)
    #expect(try exported("again", in: scratch) == original)

    // CSV: nested values come back as their JSON text, everything else exactly.
    #expect(try scratch.folio("export", "items", "-o", "out.csv").status == 0)
    let csv = scratch.read("out.csv") ?? ""
    #expect(csv.hasPrefix("id,big,n,name,nested,note\n"))
    let fromCSV = try scratch.folio("import", "copy", "out.csv")
    #expect(fromCSV.status == 0, "\(fromCSV.stderr)")
    let copy = try exported("copy", in: scratch)
    #expect(copy[0].contains(#""big":123456789012345678901234567890"#))
    #expect(copy[0].contains(#""nested":"{\"k\":[1,{\"x\":true}]}""#))
    #expect(copy[0].contains(#""note":"line one\nline \"two\"""#))
    #expect(copy[1].contains(#""n":1.50"#) && copy[1].contains(#""note":"""#))
    #expect(copy[2].contains(#""name":"007""#) && copy[2].contains(#""n":false"#))

    // SQLite out and back, from the CSV copy.
    let sqlite = try scratch.folio(
      "export", "copy", "--format", "sqlite", "-o", "out.db", "--sqlite-table", "t")
    #expect(sqlite.status == 0, "\(sqlite.stderr)")
    let fromSQLite = try scratch.folio("import", "back", "out.db", "--sqlite-table", "t")
    #expect(fromSQLite.status == 0, "\(fromSQLite.stderr)")
    let back = try exported("back", in: scratch)
    #expect(back.count == 3)
    #expect(back[0].contains(#""big":"123456789012345678901234567890""#))  // beyond 64 bits: text in SQLite
    #expect(back[0].contains(#""name":"Zoë 🚀 日本""#) && back[0].contains(#""n":null"#))
    #expect(back[1].contains(#""big":-7"#))

    // Git: one commit per import, objects in packs, a clean status.
    #expect(try scratch.git("status --porcelain --untracked-files=no").isEmpty)
    #expect(try scratch.git("fsck").isEmpty)
    #expect(try scratch.git("log --format=%s").contains("folio import: 3 created, 0 updated in items"))
    let packs = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/.git/objects/pack")
    // Per import, its documents' pack, one with the op log and the table's
    // folder tree, and a small one with the trees above it and the commit;
    // "again" holds the same documents as "items", so its documents' pack
    // is the same file.
    #expect(packs.filter { $0.hasSuffix(".pack") }.count == 11)
    #expect(packs.allSatisfy { !$0.hasPrefix("tmp_") })
    #expect(try scratch.git("ls-files items") == "items/a.json\nitems/b.json\nitems/c.json\n")
    // The op log holds one compact line per row, no bodies.
    let log = try scratch.folio("log", "items").stdout
    #expect(log.split(separator: "\n").count == 3 && !log.contains("Zoë"))
    // A later commit finds nothing to explain.
    #expect(try scratch.folio("commit").stdout == "nothing to commit\n")
  }

  @Test func csvTypesAndStdin() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let csv = "\u{FEFF}id,count,flag,empty,zip\r\n1,12345678901234567890,true,,007\r\n"
    let typed = try scratch.folio("import", "items", "-", "--format", "csv", input: csv)
    #expect(typed.status == 0, "\(typed.stderr)")
    #expect(
      try exported("items", in: scratch) == [
        #"{"count":12345678901234567890,"empty":null,"flag":true,"id":1,"zip":"007"}"#
      ])
    let plain = try scratch.folio("import", "copy", "-", "--format", "csv", "--no-detect-types", input: csv)
    #expect(plain.status == 0)
    #expect(
      try exported("copy", in: scratch) == [
        #"{"count":"12345678901234567890","empty":"","flag":"true","id":"1","zip":"007"}"#
      ])
  }

  /// Each kind of bad row, without `--continue` (nothing lands) and with it
  /// (skipped and counted).
  @Test(arguments: [
    (
      "bad.ndjson", "{\"id\":\"ok1\"}\n{\"id\":\"x\",}\n{\"id\":\"ok2\"}\n",
      "bad.ndjson:2:10: error: trailing comma"
    ),
    ("bad.csv", "id,v\nok1,1\nx,1,2\nok2,2\n", "bad.csv:3:1: error: row has 3 fields but the header has 2"),
    (
      "bad.ndjson", "{\"id\":\"ok1\"}\n[1,2]\n{\"id\":\"ok2\"}\n",
      "bad.ndjson:2:1: error: a row must be a JSON object, not an array"
    ),
    (
      "bad.ndjson", "{\"id\":\"ok1\"}\n{\"id\":\"..\"}\n{\"id\":\"ok2\"}\n",
      "bad.ndjson:2:1: error: pk '..' starts with '.'"
    ),
    (
      "bad.ndjson", "{\"id\":\"ok1\"}\n{\"id\":\"ok1\",\"v\":2}\n{\"id\":\"ok2\"}\n",
      "bad.ndjson:2:1: error: pk 'ok1' appears more than once"
    ),
    (
      "bad.json", "[{\"id\":\"ok1\"},\n {\"id\": nope},\n {\"id\":\"ok2\"}]",
      "bad.json:2:9: error: invalid literal"
    ),
  ])
  func badRows(file: String, content: String, message: String) throws {
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try scratch.folio("put", "items", "keep", input: #"{"v":1}"#).status == 0)
    try scratch.write(file, content)
    let head = try scratch.git("rev-parse HEAD")
    let failed = try scratch.folio("import", "items", file)
    #expect(failed.status == 1)
    #expect(failed.stderr.hasPrefix(message), "\(failed.stderr)")
    #expect(try exported("items", in: scratch) == [#"{"id":"keep","v":1}"#])
    #expect(try scratch.folio("log", "items").stdout.split(separator: "\n").count == 1)
    // A failed import changes nothing: the pending put is not committed either.
    #expect(try scratch.git("rev-parse HEAD") == head)
    #expect(try scratch.folio("status", "--json").stdout.contains(#""pendingOps":1"#))
    let skipped = try scratch.folio("import", "items", file, "--continue")
    #expect(skipped.status == 0, "\(skipped.stderr)")
    #expect(skipped.stderr.hasPrefix(message) && skipped.stderr.contains("(skipped)"))
    #expect(skipped.stdout.contains("2 created, 0 updated, 0 unchanged, 1 skipped"))
    #expect(try exported("items", in: scratch).count == 3)
  }

  @Test func insertRejectsExistingAndModesMerge() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("one.ndjson", #"{"id":"a","keep":1,"obj":{"x":1,"y":{"p":1}},"list":[1]}"# + "\n")
    #expect(try scratch.folio("import", "items", "one.ndjson").status == 0)
    // Same document again: nothing to do, not an error (a rerun is safe).
    #expect(
      try scratch.folio("import", "items", "one.ndjson").stdout.contains("0 created, 0 updated, 1 unchanged"))
    try scratch.write("two.ndjson", #"{"id":"a","obj":{"y":{"q":2}},"list":[2],"new":true}"# + "\n")
    let insert = try scratch.folio("import", "items", "two.ndjson")
    #expect(
      insert.status == 1 && insert.stderr.contains("two.ndjson:1:1: error: document 'a' already exists"))
    #expect(try scratch.folio("import", "items", "two.ndjson", "--mode", "upsert", "--no-commit").status == 0)
    #expect(
      try exported("items", in: scratch) == [
        #"{"id":"a","keep":1,"list":[2],"new":true,"obj":{"y":{"q":2}}}"#
      ])
    #expect(try scratch.folio("import", "items", "one.ndjson", "--mode", "replace").status == 0)
    #expect(try scratch.folio("import", "items", "two.ndjson", "--mode", "merge").status == 0)
    #expect(
      try exported("items", in: scratch) == [
        #"{"id":"a","keep":1,"list":[2],"new":true,"obj":{"x":1,"y":{"p":1,"q":2}}}"#
      ])
    #expect(try scratch.git("status --porcelain --untracked-files=no").isEmpty)
  }

  @Test func generatedPKsAndPKColumn() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("rows.csv", "code,v\nX1,1\n,2\n")
    #expect(try scratch.folio("import", "items", "rows.csv", "--pk", "code").status == 0)
    let rows = try exported("items", in: scratch)
    #expect(rows.contains(#"{"code":"X1","id":"X1","v":1}"#))
    let generated = try #require(rows.first { $0.contains(#""v":2"#) })
    let pk = try #require(generated.split(separator: "\"").dropFirst(3).first)  // {"code":"<pk>",...
    #expect(pk.count == 26)
    #expect(generated.contains(#""id":"\#(pk)""#))
  }

  @Test func exportOrderAndLimits() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write(
      "r.ndjson",
      ["10", "9", "b", "a"].enumerated().map { #"{"id":"\#($1)","rank":\#(4 - $0)}"# }.joined(separator: "\n")
    )
    #expect(try scratch.folio("import", "items", "r.ndjson").status == 0)
    let byKey = try scratch.folio("export", "items", "--columns", "id").stdout
    #expect(byKey == "{\"id\":\"9\"}\n{\"id\":\"10\"}\n{\"id\":\"a\"}\n{\"id\":\"b\"}\n")
    let byRank = try scratch.folio(
      "export", "items", "--order-by-child", "rank", "--limit-to-first", "2", "--format", "tsv", "--columns",
      "id,rank")
    #expect(byRank.stdout == "id\trank\na\t1\nb\t2\n")
  }

  /// `kill -9` at random moments of an import: the table is either as
  /// before or complete, never half, and rerunning completes it. Each kill
  /// waits until this run is staging rows (its staged op file is newer than
  /// its start), then a random pause, and must find the import still
  /// running, so it lands mid-import (staging, landing or committing).
  @Test func interruptedImportReruns() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let count = 20000
    let stagedOps = scratch.path + "/.git/folio/import/ops.ndjson"
    func now() -> timespec {
      var time = timespec()
      clock_gettime(CLOCK_REALTIME, &time)
      return time
    }
    var text = ""
    for i in 0..<count {
      text += #"{"id":"r\#(i)","v":\#(i),"s":"\#(String(repeating: "x", count: 50))"}"# + "\n"
    }
    try scratch.write("big.ndjson", text)
    let seed = testSeed()
    var state = seed
    for _ in 0..<4 {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
      process.arguments = ["import", "items", "big.ndjson"]
      process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      let started = now()
      try process.run()
      // Staging has begun when this run's op file exists: a leftover from
      // the run before is older than `started` (or was cleared).
      func staging() -> Bool {
        var st = stat()
        return stat(stagedOps, &st) == 0
          && (st.st_mtim.tv_sec, st.st_mtim.tv_nsec) >= (started.tv_sec, started.tv_nsec)
      }
      eventually { staging() || !process.isRunning }
      #expect(staging(), "seed \(seed): the import never began staging before it ended")
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      pause(seconds: Double((state >> 33) % 700_000) / 1e6)
      #expect(process.isRunning, "seed \(seed): the import ended before the kill; give it more rows")
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      let files = (try? FileManager.default.contentsOfDirectory(atPath: scratch.path + "/items"))?.filter {
        $0.hasSuffix(".json") && !$0.hasPrefix(".")
      }
      let present = try scratch.folio("export", "items").stdout.split(separator: "\n").count
      #expect(present == 0 || present == count, "seed \(seed): \(present) rows, \(files?.count ?? 0) files")
    }
    let rerun = try scratch.folio("import", "items", "big.ndjson")
    #expect(rerun.status == 0, "seed \(seed): \(rerun.stderr)")
    #expect(try scratch.folio("export", "items").stdout.split(separator: "\n").count == count, "seed \(seed)")
    #expect(try scratch.folio("fsck").status == 0, "seed \(seed)")
    #expect(try scratch.git("status --porcelain --untracked-files=no").isEmpty, "seed \(seed)")
    #expect(try scratch.git("ls-files items").split(separator: "\n").count == count, "seed \(seed)")
  }
}

/// A JSON line as Folio's exporter writes it: compact, keys sorted.
private func canonicalCompact(_ line: String) throws -> String {
  let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
  _ = object
  // Folio keeps number text exactly, which JSONSerialization does not, so
  // sort the members of the literal by hand.
  return sortedMembers(line)
}

private func sortedMembers(_ line: String) -> String {
  // The test rows are flat at the top level apart from nested values that
  // hold no top-level separators: split on the top-level commas.
  var depth = 0
  var inString = false
  var escaped = false
  var members: [String] = []
  var current = ""
  for character in line.dropFirst().dropLast() {
    if inString {
      if escaped {
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "\"" {
        inString = false
      }
    } else if character == "\"" {
      inString = true
    } else if character == "{" || character == "[" {
      depth += 1
    } else if character == "}" || character == "]" {
      depth -= 1
    } else if character == "," && depth == 0 {
      members.append(current)
      current = ""
      continue
    }
    current.append(character)
  }
  members.append(current)
  return "{" + members.sorted().joined(separator: ",") + "}"
}
