import Folio
import Glibc

struct QueryCommand: Command {
  static let name = "query"
  static let abstract = "Print a table's documents in order, with ranges, cursors, limits and filters."
  static let usage = """
    folio query TABLE [--order-by-child PATH | --order-by-key | --order-by-value]
                      [--start-at V] [--start-after V] [--end-at V] [--end-before V] [--equal-to V]
                      [--start-key K] [--end-key K] [--limit-to-first N | --limit-to-last N]
                      [--where EXPR] [--format ndjson|json|csv|table] [--count] [--follow]
    """
  static let details = """
    ARGUMENTS:
      TABLE                   The table.

    ORDERING (one; default: the table's first 'order' key in folio.yaml, else the key):
      --order-by-child PATH   By the value at PATH (dotted: meta.updated).
      --order-by-key          By pk.
      --order-by-value        By the whole document.

    RANGE (V is JSON; text that is not valid JSON is taken as a string):
      --start-at V            From V, inclusive.        --start-after V   After V.
      --end-at V              Up to V, inclusive.       --end-before V    Before V.
      --equal-to V            Only V.
      --start-key K           With a start: begin at pk K among the documents equal to V.
      --end-key K             With an end: stop at pk K among the documents equal to V.
      To page, pass the last document's value and pk:
        folio query flights --start-after 12 --start-key f77 --limit-to-first 20

    LIMIT AND FILTER:
      --limit-to-first N      The first N documents (after the range and the filter).
      --limit-to-last N       The last N, still printed in ascending order.
      --where EXPR            A filter: == != < <= > >=, in [..], contains, exists(path),
                              && || ! and parentheses, dotted paths and JSON literals,
                              e.g. 'AIRLINE == "AA" && DEPARTURE_DELAY > 60'.

    OUTPUT:
      --format F              ndjson (default, one document per line), json (an array),
                              csv (header row, then one row per document),
                              table (aligned columns fitted to the terminal width).
      --count                 Print only the number of documents.
      --follow                Then print each change as NDJSON until interrupted (see 'folio observe').

    Values sort null < false < true < numbers < strings (UTF-16) < arrays/objects; ties by pk.
    A bad expression or an invalid combination exits 64 with the position of the mistake.
    """

  var table: String
  var ordering: String?
  var orderingCount = 0
  var bounds: [(option: String, value: JSONValue)] = []
  var startKey: String?
  var endKey: String?
  var limits: [(option: String, n: Int)] = []
  var filter: String?
  var format: String
  var count: Bool
  var follow: Bool

  init(arguments: [String]) throws {
    let options: Set<String> = [
      "--order-by-child", "--start-at", "--start-after", "--end-at", "--end-before", "--equal-to",
      "--start-key", "--end-key", "--limit-to-first", "--limit-to-last", "--where", "--format",
    ]
    let parsed = try CommandLineArguments(
      arguments, options: options, flags: ["--order-by-key", "--order-by-value", "--count", "--follow"])
    try parsed.expectPositionals(1...1)
    table = parsed.positionals[0]
    if let path = parsed.value("--order-by-child") {
      ordering = "child:" + path
      orderingCount += 1
    }
    for flag in ["--order-by-key", "--order-by-value"] where parsed.flag(flag) {
      ordering = flag
      orderingCount += 1
    }
    if orderingCount > 1 {
      throw UsageError(
        "give one of --order-by-child, --order-by-key and --order-by-value: a query has one ordering")
    }
    for option in ["--start-at", "--start-after", "--equal-to", "--end-at", "--end-before"] {
      if let text = parsed.value(option) { bounds.append((option, Self.value(text))) }
    }
    startKey = parsed.value("--start-key")
    endKey = parsed.value("--end-key")
    let starts = bounds.filter { ["--start-at", "--start-after", "--equal-to"].contains($0.option) }
    let ends = bounds.filter { ["--end-at", "--end-before", "--equal-to"].contains($0.option) }
    if starts.count > 1 {
      throw UsageError("\(starts.map(\.option).joined(separator: " and ")): a query has one start")
    }
    if ends.count > 1 {
      throw UsageError("\(ends.map(\.option).joined(separator: " and ")): a query has one end")
    }
    if startKey != nil && starts.isEmpty {
      throw UsageError("--start-key needs --start-at, --start-after or --equal-to")
    }
    if endKey != nil && ends.isEmpty {
      throw UsageError("--end-key needs --end-at, --end-before or --equal-to")
    }
    if let startKey, let endKey, starts.first?.option == "--equal-to", startKey != endKey {
      throw UsageError("--equal-to takes one key: --start-key and --end-key differ")
    }
    for option in ["--limit-to-first", "--limit-to-last"] {
      guard let text = parsed.value(option) else { continue }
      guard let n = Int(text) else { throw UsageError("\(option) needs a whole number, not '\(text)'") }
      limits.append((option, n))
    }
    if limits.count > 1 { throw UsageError("--limit-to-first and --limit-to-last: a query has one limit") }
    filter = parsed.value("--where")
    format = parsed.value("--format") ?? "ndjson"
    guard ["ndjson", "json", "csv", "table"].contains(format) else {
      throw UsageError("unknown format '\(format)'; use ndjson, json, csv or table")
    }
    count = parsed.flag("--count")
    follow = parsed.flag("--follow")
    if follow && (count || format != "ndjson") {
      throw UsageError("--follow prints NDJSON: drop --count and --format")
    }
  }

  /// A range value: JSON if it parses, else the text as a string.
  static func value(_ text: String) -> JSONValue {
    (try? JSONValue(parsing: text)) ?? .string(text)
  }

  func makeQuery(_ store: Store) throws -> Query {
    var query = store.collection(table).query()
    do {
      switch ordering {
      case "--order-by-key"?: query = try query.orderByKey()
      case "--order-by-value"?: query = try query.orderByValue()
      case let child? where child.hasPrefix("child:"):
        query = try query.orderBy(child: String(child.dropFirst(6)))
      default: break
      }
      for (option, value) in bounds {
        switch option {
        case "--start-at": query = try query.startAt(value, key: startKey)
        case "--start-after": query = try query.startAfter(value, key: startKey)
        case "--equal-to": query = try query.equalTo(value, key: startKey ?? endKey)
        case "--end-at": query = try query.endAt(value, key: endKey)
        default: query = try query.endBefore(value, key: endKey)
        }
      }
      for (option, n) in limits {
        query = try option == "--limit-to-first" ? query.limitToFirst(n) : query.limitToLast(n)
      }
      if let filter { query = try query.where(Predicate(parsing: filter, source: "--where")) }
    } catch let error as FolioError where error.code == .invalidQuery {
      throw UsageError(Self.explain(error, expression: filter))
    }
    return query
  }

  /// The message of a query mistake, with the expression and a caret under
  /// the column for a filter that does not parse.
  static func explain(_ error: FolioError, expression: String?) -> String {
    guard let location = error.location, let expression else { return error.message }
    let line = expression.split(separator: "\n", omittingEmptySubsequences: false)[location.line - 1]
    let caret = String(repeating: " ", count: max(0, location.column - 1)) + "^"
    return "--where:\(location.line):\(location.column): \(error.message)\n  \(line)\n  \(caret)"
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let query = try makeQuery(store)
    if follow { return try ObserveCommand.follow(query) }
    if count {
      Output.print(String(try query.count()))
      return 0
    }
    let key = try store.table(named: table).key
    switch format {
    case "ndjson":
      try query.forEach { Output.printRaw($0.json.compactBytes() + [UInt8(ascii: "\n")]) }
    case "json":
      var first = true
      try query.forEach { document in
        Output.printRaw(Array((first ? "[\n" : ",\n").utf8) + document.json.compactBytes())
        first = false
      }
      Output.print(first ? "[]" : "\n]")
    case "csv":
      let documents = try query.get()
      let columns = Self.columns(documents, key: key)
      Output.print(columns.map(Self.csvField).joined(separator: ","))
      for document in documents {
        Output.print(columns.map { Self.csvField(Self.cell(document[$0], csv: true)) }.joined(separator: ","))
      }
    default:
      let documents = try query.get()
      if documents.isEmpty {
        Output.error("no documents")
        return 0
      }
      let columns = Self.columns(documents, key: key)
      let rows = [columns] + documents.map { document in columns.map { Self.cell(document[$0], csv: false) } }
      for line in TableLayout(rows: rows, width: TableLayout.terminalWidth()).lines() { Output.print(line) }
    }
    return 0
  }

  /// The key column, then every other top-level column, sorted.
  static func columns(_ documents: [Document], key: String) -> [String] {
    var seen = Set<String>()
    for document in documents {
      for member in document.value where member.key != key { seen.insert(member.key) }
    }
    return [key] + seen.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
  }

  /// A value as a cell: strings as they are, other values as compact JSON,
  /// missing as empty (and null as empty in CSV).
  static func cell(_ value: JSONValue?, csv: Bool) -> String {
    switch value {
    case nil: ""
    case .null?: csv ? "" : "null"
    case .string(let text)?: text
    case let other?: other.compactString
    }
  }

  /// RFC 4180: quote a field holding a comma, a quote or a line break.
  static func csvField(_ text: String) -> String {
    guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
    return "\"" + text.replacingQuotes() + "\""
  }
}

extension String {
  fileprivate func replacingQuotes() -> String {
    var out = ""
    for character in self {
      if character == "\"" { out += "\"\"" } else { out.append(character) }
    }
    return out
  }
}

/// Aligned columns, narrowed to fit a width: the widest column gives way
/// first, cut cells end in '…', and columns that still do not fit are
/// dropped from the right.
struct TableLayout {
  var rows: [[String]]
  var width: Int

  static func terminalWidth() -> Int {
    var size = winsize()
    if isatty(STDOUT_FILENO) != 0, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
      return Int(size.ws_col)
    }
    if let text = getenv("COLUMNS"), let columns = Int(String(cString: text)), columns > 0 { return columns }
    return 120
  }

  func lines() -> [String] {
    let cleaned = rows.map { $0.map { $0.replacingLineBreaks() } }
    var widths = (0..<cleaned[0].count).map { column in cleaned.map { $0[column].count }.max() ?? 0 }
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
        let cell = text.count > widths[column] ? String(text.prefix(widths[column] - 1)) + "…" : text
        return cell.padding(toLength: widths[column])
      }.joined(separator: "  ").trimmingTrailingSpaces()
    }
  }
}

extension String {
  fileprivate func replacingLineBreaks() -> String {
    String(map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 })
  }
}
