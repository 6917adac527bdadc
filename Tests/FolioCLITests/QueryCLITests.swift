import FolioTestSupport
import Foundation
import Testing

struct QueryCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
        order: [rank]
    """

  func makeTable() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    for (pk, rank) in [("a", 2), ("b", 1), ("c", 1), ("d", 1), ("e", 0)] {
      let result = try scratch.folio(
        "put", "todos", pk, "-", input: #"{"rank": \#(rank), "title": "Task \#(pk), long", "tags": ["x"]}"#)
      #expect(result.status == 0, "\(result.stderr)")
    }
    return scratch
  }

  func pks(_ stdout: String) -> [String] {
    stdout.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
    }
  }

  @Test func ordersByTheFirstOrderKeyAndPagesByCursor() throws {
    let scratch = try makeTable()
    defer { scratch.remove() }
    let all = try scratch.folio("query", "todos")
    #expect(all.status == 0 && all.stderr.isEmpty)
    #expect(pks(all.stdout) == ["e", "b", "c", "d", "a"])
    let page = try scratch.folio(
      "query", "todos", "--start-after", "1", "--start-key", "b", "--limit-to-first", "2")
    #expect(pks(page.stdout) == ["c", "d"])
    let back = try scratch.folio(
      "query", "todos", "--end-before", "1", "--end-key", "d", "--limit-to-last", "2")
    #expect(pks(back.stdout) == ["b", "c"])
    #expect(
      pks(try scratch.folio("query", "todos", "--order-by-key", "--start-at", "c").stdout) == ["c", "d", "e"])
    #expect(
      pks(try scratch.folio("query", "todos", "--order-by-child", "title", "--limit-to-last", "1").stdout)
        == ["e"])
    #expect(
      pks(try scratch.folio("query", "todos", "--where", #"rank == 1 && title contains "c""#).stdout) == ["c"]
    )
    #expect(try scratch.folio("query", "todos", "--equal-to", "1", "--count").stdout == "3\n")
    // Not JSON: taken as a string.
    #expect(
      pks(try scratch.folio("query", "todos", "--order-by-child", "title", "--start-at", "Task d").stdout)
        == ["d", "e"])
  }

  @Test func formats() throws {
    let scratch = try makeTable()
    defer { scratch.remove() }
    let json = try scratch.folio("query", "todos", "--limit-to-first", "2", "--format", "json")
    let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
    #expect(array?.compactMap { $0["id"] as? String } == ["e", "b"])
    let empty = try scratch.folio("query", "todos", "--equal-to", "7", "--format", "json")
    #expect(empty.stdout == "[]\n")
    let csv = try scratch.folio("query", "todos", "--limit-to-first", "1", "--format", "csv")
    // RFC 4180, as `folio export` writes it: LF line ends.
    #expect(csv.stdout == "id,rank,tags,title\ne,0,\"[\"\"x\"\"]\",\"Task e, long\"\n")
    let table = try scratch.folio("query", "todos", "--format", "table", "--width", "24")
    let lines = table.stdout.split(separator: "\n")
    #expect(lines.count == 6)
    #expect(lines.allSatisfy { $0.count <= 24 }, "\(table.stdout)")
    #expect(lines[0].hasPrefix("id  rank"))
    #expect(table.stdout.contains("…"))
    // Piped, a table is never cut, whatever COLUMNS says: a cut cell
    // would lose what the reader asked for.
    let piped = try FolioRunner.run(
      ["query", "todos", "--format", "table"], in: scratch.path, environment: ["COLUMNS": "24"])
    #expect(piped.status == 0 && !piped.stdout.contains("…"), "\(piped.stdout)")
    #expect(piped.stdout.contains("Task a, long"), "\(piped.stdout)")
    let select = try scratch.folio("query", "todos", "--format", "table", "--select", "title,rank")
    let header = try #require(select.stdout.split(separator: "\n").first)
    #expect(header.hasPrefix("title ") && header.hasSuffix(" rank"), "\(select.stdout)")
    let widthAlone = try scratch.folio("query", "todos", "--width", "24")
    #expect(widthAlone.status == 64 && widthAlone.stderr.contains("--width goes with --format table"))
  }

  @Test(arguments: [
    (["--where", "rank = 1"], "--where:1:6:"),
    (["--where", "(rank > 1"], "--where:1:10:"),
    (["--start-at", "1", "--start-after", "2"], "one start"),
    (["--limit-to-first", "0"], "positive whole number"),
    (["--limit-to-first", "1", "--limit-to-last", "1"], "one limit"),
    (["--order-by-key", "--order-by-value"], "one ordering"),
    (["--order-by-key", "--start-at", "a", "--start-key", "b"], "drop key:"),
    (["--start-at", "1", "--start-at", "2"], "more than once"),
    (["--order-by-key", "--start-at", "5"], "must be a pk"),
    (["--order-by-child", "$key"], "orderByKey"),
    (["--start-key", "b"], "--start-key needs"),
    (["--format", "xml"], "unknown format"),
  ])
  func mistakesExit64WithThePosition(_ arguments: [String], _ words: String) throws {
    let scratch = try makeTable()
    defer { scratch.remove() }
    let result = try FolioRunner.run(["query", "todos"] + arguments, in: scratch.path)
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("error: "))
    #expect(result.stderr.contains(words), "\(result.stderr)")
    #expect(result.stdout.isEmpty)
  }

  @Test func aCaretPointsAtTheMistake() throws {
    let scratch = try makeTable()
    defer { scratch.remove() }
    let result = try scratch.folio("query", "todos", "--where", "rank >= 1 &&")
    #expect(result.status == 64)
    // Column 13, just past the end: two spaces of indent and 12 more.
    #expect(
      result.stderr.contains("  rank >= 1 &&\n" + String(repeating: " ", count: 14) + "^\n"),
      "\(result.stderr)")
  }

  /// Terminal columns: CJK and emoji take two, combining marks none.
  static func columns(_ line: Substring) -> Int {
    line.reduce(0) { total, character in
      let scalars = character.unicodeScalars
      if scalars.contains(where: { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }) {
        return total + 2
      }
      let first = scalars.first!.value
      let wide =
        (0x1100...0x115F).contains(first) || (0x2E80...0xA4CF).contains(first)
        || (0xAC00...0xD7A3).contains(first) || (0xFF00...0xFF60).contains(first)
      return total + (wide ? 2 : 1)
    }
  }

  @Test func tableColumnsCountDisplayWidth() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let titles: [(String, String)] = [
      ("a", "東京都渋谷区の会議"), ("b", "🎉🎉 party"), ("c", "cafe\u{301} noir"), ("d", "plain"),
      ("e", "한국어 텍스트"), ("f", "👩‍👩‍👧 family"), ("g", "ｆｕｌｌ"),
    ]
    for (rank, (pk, title)) in titles.enumerated() {
      let result = try scratch.folio(
        "put", "todos", pk, "-", input: #"{"rank": \#(rank), "title": "\#(title)"}"#)
      #expect(result.status == 0, "\(result.stderr)")
    }
    // Wide enough for every cell: the columns line up, measured on screen.
    let wide = try scratch.folio("query", "todos", "--format", "table", "--width", "80")
    let lines = wide.stdout.split(separator: "\n")
    #expect(lines.count == 8, "\(wide.stdout)")
    #expect(!wide.stdout.contains("…"))
    // "title" starts at the same screen column on every line.
    let titleColumn = Self.columns(lines[0].prefix(upTo: lines[0].range(of: "title")!.lowerBound))
    for (line, (_, title)) in zip(lines.dropFirst(), titles) {
      let at = try #require(line.range(of: title)?.lowerBound, "\(line)")
      #expect(Self.columns(line[..<at]) == titleColumn, "\(line)")
    }
    // Narrow: every line fits the terminal, on screen.
    for width in [12, 15, 17, 20] {
      let narrow = try scratch.folio("query", "todos", "--format", "table", "--width", "\(width)")
      let narrowLines = narrow.stdout.split(separator: "\n")
      #expect(narrowLines.count == 8)
      for line in narrowLines { #expect(Self.columns(line) <= width, "\(width): \(line)") }
      // At 12 the title column no longer fits at all and is dropped.
      #expect(narrow.stdout.contains("…") == (width > 12), "\(width): \(narrow.stdout)")
    }
  }

  @Test func anEditBehindFoliosBackShowsInTheNextQuery() throws {
    let scratch = try makeTable()
    defer { scratch.remove() }
    #expect(pks(try scratch.folio("query", "todos", "--limit-to-first", "1").stdout) == ["e"])
    try scratch.write("data/todos/a.json", #"{"id": "a", "rank": -1}"#)
    #expect(pks(try scratch.folio("query", "todos", "--limit-to-first", "1").stdout) == ["a"])
  }
}

/// `indexes:` and `--explain` through the binary.
struct SecondaryIndexCLITests {
  @Test func explainNamesTheIndexAFilterUses() throws {
    let scratch = try CLIScratch(
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n    order: [rank]\n    indexes: [owner]\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    for (pk, owner) in [("a", "ann"), ("b", "bob"), ("c", "ann"), ("d", "cy")] {
      let put = try scratch.folio("put", "todos", pk, "-", input: #"{"rank": 1, "owner": "\#(owner)"}"#)
      #expect(put.status == 0, "\(put.stderr)")
    }
    let explain = try scratch.folio("query", "todos", "--where", #"owner == "ann""#, "--explain")
    #expect(explain.status == 0 && explain.stderr.isEmpty)
    #expect(
      explain.stdout
        == "secondary index on owner, range narrowed by the filter, then sorted; reads 2 documents\n")
    let count = try scratch.folio("query", "todos", "--where", #"owner in ["ann", "cy"]"#, "--count")
    #expect(count.stdout == "3\n")
    // A bad entry: positioned, and nothing runs.
    try scratch.write(
      "folio.yaml", "version: 1\ntables:\n  todos:\n    path: data/todos\n    indexes: [owner, owner]\n")
    let bad = try scratch.folio("query", "todos", "--count")
    #expect(bad.status == 1 && bad.stdout.isEmpty)
    #expect(
      bad.stderr.contains("folio.yaml:5:22: error: index path 'owner' of table 'todos' is listed twice"))
  }
}
