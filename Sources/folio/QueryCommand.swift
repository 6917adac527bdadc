import Folio
import Glibc

struct QueryCommand: Command {
  static let name = "query"
  var runsUntilStopped: Bool { follow }
  static let abstract = "Print a table's documents in order, with ranges, cursors, limits and filters."
  static let usage = """
    folio query TABLE [--order-by-child PATH | --order-by-key | --order-by-value]
                      [--start-at V] [--start-after V] [--end-at V] [--end-before V] [--equal-to V]
                      [--start-key K] [--end-key K] [--limit-to-first N | --limit-to-last N]
                      [--where EXPR] [--strict] [--select PATHS] [--format ndjson|json|csv|table]
                      [--width N] [--count] [--follow] [--explain]
    """
  static let details = """
    ARGUMENTS:
      TABLE                   The table.

    \(QueryArguments.details)
      To page, pass the last document's value and pk:
        folio query flights --start-after 12 --start-key f77 --limit-to-first 20

    OUTPUT:
      --select PATHS          Only these fields: a,b.c,`dep time`. In ndjson and json nested
                              fields stay nested; in csv and table each is a column, in order.
      --format F              ndjson (default, one document per line), json (an array),
                              csv (header row, then one row per document),
                              table (aligned columns; fitted to the terminal's width on a
                              terminal, never cut when piped).
      --width N               With --format table: fit the columns to N characters.
      --count                 Print only the number of documents.
      --follow                Then print each change as NDJSON until interrupted (see 'folio observe').
      --explain               Print how the query will run (the index, whether the filter
                              narrows its range, how many documents it reads) instead.

    Values sort null < false < true < numbers < strings (UTF-16) < arrays/objects; ties by pk.
    A bad expression or an invalid combination exits 64 with the position of the mistake.
    A field in --where, --order-by-child or --select that no document has is named on stderr
    with the nearest field that documents have (an error, exit 64, with --strict).
    A document file that does not parse is left out of the answer and named on stderr as
    'path:line:col: warning: left out: …'; the exit status is then 3.

    EXAMPLES:
      folio query penguins --where 'bill_length_mm > 50 && sex == "male"' --select species,island
      folio query flights --where '`dep time` >= 2300' --format table
    """

  var table: String
  var query: QueryArguments
  var format: String
  var count: Bool
  var follow: Bool
  var explain: Bool
  /// `--select`: the fields to print, in order; nil prints whole documents.
  var select: [FieldPath]?
  /// `--width`: the table's width; nil fits a terminal and never cuts a pipe.
  var width: Int?

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: QueryArguments.options.union(["--format", "--select", "--width"]),
      flags: QueryArguments.flags.union(["--count", "--follow", "--explain"]))
    try parsed.expectPositionals(1...1)
    table = parsed.positionals[0]
    query = try QueryArguments(parsed)
    format = try parsed.format(["ndjson", "json", "csv", "table"])
    count = parsed.flag("--count")
    follow = parsed.flag("--follow")
    explain = parsed.flag("--explain")
    if let text = parsed.value("--select") {
      do {
        select = try FieldPath.list(parsing: text, source: "--select")
      } catch let error as FolioError {
        throw UsageError("\(error.location.map { "\($0): " } ?? "")\(error.message)")
      }
    }
    if let text = parsed.value("--width") {
      guard let n = Int(text), n > 0 else {
        throw UsageError("--width needs a positive whole number, not '\(text)'")
      }
      guard format == "table" else { throw UsageError("--width goes with --format table") }
      width = n
    }
    if follow && (count || format != "ndjson") {
      throw UsageError("--follow prints NDJSON: drop --count and --format")
    }
    if query.asOf != nil && (follow || explain) {
      throw UsageError(
        "--as-of reads a past commit, which neither changes nor has an index: drop --follow and --explain")
    }
  }

  func makeQuery(_ store: Store) throws -> Query {
    try query.makeQuery(store, table: table)
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let snapshot = try query.snapshot(store)
    // A full stat check of a large table starts a daemon for the next query.
    if snapshot == nil { store.startIndexDaemonOnDemand(executable: Executable.path) }
    let query = try makeQuery(store)
    try self.query.checkFields(store, table: table, selected: select.map { [("--select", $0)] } ?? [])
    // Document files that do not parse: left out, named, exit 3.
    var skipped: [FolioError] = []
    func forEach(_ body: (Document) throws -> Void) throws {
      var cursor = try snapshot?.documents(query) ?? query.documents()
      while let document = try cursor.next() { try body(document) }
      skipped += cursor.skipped
    }
    if explain {
      Output.print(try query.explain().description)
      return 0
    }
    if follow { return try ObserveCommand.follow(query) }
    if count {
      var n = 0
      if snapshot == nil { n = try query.count(skipped: &skipped) } else { try forEach { _ in n += 1 } }
      Output.print(String(n))
      return LeftOutFiles.report(skipped)
    }
    let config = try store.table(named: table)
    // A table that keeps its pk in the file name gets it back in each row.
    func row(_ document: Document) throws -> JSONValue {
      let whole = try config.row(document.value, pk: document.pk)
      return .object(select.map { whole.selecting($0) } ?? whole)
    }
    switch format {
    case "ndjson":
      let output = OutputBuffer()
      defer { output.flush() }
      try forEach { output.append(try row($0).compactBytes() + [UInt8(ascii: "\n")]) }
    case "json":
      let output = OutputBuffer()
      var first = true
      try forEach { document in
        output.append(Array((first ? "[\n" : ",\n").utf8) + (try row(document)).compactBytes())
        first = false
      }
      output.flush()
      Output.print(first ? "[]" : "\n]")
    case "csv":
      // The export's CSV writer (RFC 4180), so query and export agree.
      var options = ExportOptions()
      options.format = .csv
      options.columnPaths = select
      if let snapshot {
        skipped = try store.exportRows(query, asOf: snapshot, options: options).skipped
      } else {
        skipped = try store.exportRows(query, options: options).skipped
      }
    default:
      var documents: [Document] = []
      try forEach { documents.append($0) }
      if documents.isEmpty {
        Output.error("no documents")
        return LeftOutFiles.report(skipped)
      }
      let rows = try documents.map { try config.row($0.value, pk: $0.pk) }
      let paths = select ?? Self.columns(rows, key: config.rowKey()).map(FieldPath.column)
      let cells =
        [paths.map { $0.segments.joined(separator: ".") }]
        + rows.map { row in paths.map { Self.cell(row.childValue(at: $0)) } }
      for line in TextTable(rows: cells, width: width ?? TextTable.terminalWidth()).lines() {
        Output.print(line)
      }
    }
    return LeftOutFiles.report(skipped)
  }

  /// The key column, then every other top-level column, sorted.
  static func columns(_ rows: [JSONObject], key: String) -> [String] {
    // By bytes: twin keys ("\u{E9}" and "e\u{301}") are two columns.
    var seen = Set<ExactKey>()
    for row in rows {
      for member in row where !member.key.utf8.elementsEqual(key.utf8) {
        seen.insert(ExactKey(member.key))
      }
    }
    return [key] + seen.sorted().map(\.string)
  }

  /// A value as a table cell: strings as they are, other values as compact
  /// JSON, missing as empty.
  static func cell(_ value: JSONValue?) -> String {
    switch value {
    case nil: ""
    case .string(let text)?: text
    case let other?: other.compactString
    }
  }
}

/// Aligned columns, narrowed to fit a width: the widest column gives way
/// first, cut cells end in '…', and columns that still do not fit are
/// dropped from the right.
struct TextTable {
  var rows: [[String]]
  var width: Int

  /// The terminal's width on a terminal; unbounded when the output goes to
  /// a pipe or a file, where a cut cell would lose data a reader asked for.
  static func terminalWidth() -> Int {
    guard isatty(STDOUT_FILENO) != 0 else { return Int.max / 4 }
    var size = winsize()
    if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
    if let text = getenv("COLUMNS"), let columns = Int(String(cString: text)), columns > 0 { return columns }
    return 80
  }

  func lines() -> [String] {
    let cleaned = rows.map { $0.map { $0.replacingLineBreaks() } }
    // In terminal columns, not Characters: a CJK character or an emoji
    // takes two, a combining mark none.
    var widths = (0..<cleaned[0].count).map { column in cleaned.map { $0[column].displayWidth }.max() ?? 0 }
    let minimum = 4
    func total() -> Int { widths.reduce(0, +) + 2 * max(0, widths.count - 1) }
    while total() > width, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }),
      widths[widest] > minimum
    {
      widths[widest] -= 1
    }
    while total() > width && widths.count > 1 { widths.removeLast() }
    return cleaned.map { row in
      widths.indices.map { column in
        let text = row[column]
        let cell = text.displayWidth > widths[column] ? text.prefix(columns: widths[column] - 1) + "…" : text
        return cell.padding(columns: widths[column])
      }.joined(separator: "  ").trimmingTrailingSpaces()
    }
  }
}

extension String {
  fileprivate func replacingLineBreaks() -> String {
    String(map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 })
  }
}
