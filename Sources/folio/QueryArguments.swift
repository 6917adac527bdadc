import Folio

/// The query options that `folio query` and `folio export` share: one
/// ordering, a range with optional pk cursors, one limit and a `--where`
/// filter. Both commands parse them here, so they accept the same spellings
/// and reject the same mistakes with the same messages.
struct QueryArguments {
  /// Options that take a value.
  static let options: Set<String> = [
    "--order-by-child", "--start-at", "--start-after", "--end-at", "--end-before", "--equal-to",
    "--start-key", "--end-key", "--limit-to-first", "--limit-to-last", "--where", "--as-of",
  ]
  /// Options that take none.
  static let flags: Set<String> = ["--order-by-key", "--order-by-value", "--strict"]

  /// The usage line's query part.
  static let usage = """
    [--order-by-child PATH | --order-by-key | --order-by-value]
    [--start-at V] [--start-after V] [--end-at V] [--end-before V] [--equal-to V]
    [--start-key K] [--end-key K] [--limit-to-first N | --limit-to-last N] [--where EXPR]
    [--strict] [--as-of REV]
    """

  /// The help text for these options.
  static let details = """
    ORDERING (one; default: the table's first 'order' key in folio.yaml, else the key):
      --order-by-child PATH   By the value at PATH (meta.updated, or meta/updated as Firebase;
                              a name with a space or a dot in backticks: '`dep time`').
      --order-by-key          By pk.
      --order-by-value        By the whole document.

    RANGE (V is JSON; text that is not valid JSON is taken as a string):
      --start-at V            From V, inclusive.        --start-after V   After V.
      --end-at V              Up to V, inclusive.       --end-before V    Before V.
      --equal-to V            Only V.
      --start-key K           With a start: begin at pk K among the documents equal to V.
      --end-key K             With an end: stop at pk K among the documents equal to V.

    LIMIT AND FILTER:
      --limit-to-first N      The first N documents (after the range and the filter).
      --limit-to-last N       The last N, still in ascending order.
      --where EXPR            A filter: == != < <= > >=, in [..], contains, exists(path),
                              && || ! and parentheses, dotted paths and JSON literals,
                              e.g. 'AIRLINE == "AA" && DEPARTURE_DELAY > 60'. Text is quoted
                              ("male"); a field name with a space or a dot goes in backticks
                              ('`dep time` > 600'). < <= > >= hold only between two numbers,
                              two strings or two booleans: never for null, a missing field or
                              "NA". '== null' matches null and missing; exists(a) tells them
                              apart; != is the negation of ==.
      --strict                A field that no document of the table has is an error (exit 64),
                              not a warning.

    HISTORY:
      --as-of REV             The table as commit REV held it, read from git without a checkout:
                              an id, branch, tag, HEAD~N, or a date (2026-11-30, '2 days ago')
                              meaning the branch's last commit before it. No index: a page in key
                              order reads its page; any other query reads the table once.
    """

  private var ordering: Ordering?
  private var bounds: [(option: String, value: JSONValue)] = []
  private var startKey: String?
  private var endKey: String?
  private var limit: (option: String, n: Int)?
  private(set) var filter: String?
  /// Whether a field no document holds is an error rather than a warning.
  private(set) var strict = false
  private var childPath: String?

  private enum Ordering {
    case child(String)
    case key
    case value
  }

  /// Reads and checks the query options of a parsed command line.
  /// - Throws: ``UsageError`` for an invalid combination.
  init(_ parsed: CommandLineArguments) throws {
    var orderings = 0
    if let path = parsed.value("--order-by-child") {
      ordering = .child(path)
      childPath = path
      orderings += 1
    }
    if parsed.flag("--order-by-key") {
      ordering = .key
      orderings += 1
    }
    if parsed.flag("--order-by-value") {
      ordering = .value
      orderings += 1
    }
    if orderings > 1 {
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
    var limits: [(option: String, n: Int)] = []
    for option in ["--limit-to-first", "--limit-to-last"] {
      guard let text = parsed.value(option) else { continue }
      // As Firebase's SDKs take a limit: any whole JSON number (`20`, `2e1`).
      guard let n = Query.limitCount(text), n > 0 else {
        throw UsageError("\(option) needs a positive whole number, such as 20, not '\(text)'")
      }
      limits.append((option, n))
    }
    if limits.count > 1 { throw UsageError("--limit-to-first and --limit-to-last: a query has one limit") }
    limit = limits.first
    filter = parsed.value("--where")
    asOf = parsed.value("--as-of")
    strict = parsed.flag("--strict")
  }

  /// Says on stderr which fields the query names (in `--where`,
  /// `--order-by-child` and `selected`) no document of `table` holds, each
  /// with the nearest field that documents do hold: a typo would otherwise
  /// give an empty answer in silence. A past commit (`--as-of`) is not
  /// checked.
  /// - Throws: ``UsageError`` with every such field under `--strict`.
  func checkFields(
    _ store: Store, table: String, selected: [(option: String, paths: [FieldPath])] = []
  ) throws {
    guard asOf == nil else { return }
    var named: [(option: String, paths: [FieldPath])] = []
    if let filter { named.append(("--where", try Predicate(parsing: filter, source: "--where").paths)) }
    if let childPath { named.append(("--order-by-child", [try Query.childPath(childPath)])) }
    named += selected
    try Self.reportUnknownFields(store, table: table, named: named, strict: strict)
  }

  /// Warns on stderr of each path of `named` that no document of `table`
  /// holds, naming the option it came from and the nearest field.
  /// - Throws: ``UsageError`` with every such field when `strict`.
  static func reportUnknownFields(
    _ store: Store, table: String, named: [(option: String, paths: [FieldPath])], strict: Bool
  ) throws {
    let unknown = try store.collection(table).unknownFields(named.flatMap(\.paths))
    guard !unknown.isEmpty else { return }
    let lines = unknown.map { field in
      let option = named.first { $0.paths.contains(field.path) }?.option ?? "--where"
      return "\(option): \(field)"
    }
    if strict { throw UsageError(lines.joined(separator: "\nerror: ")) }
    for line in lines {
      Output.error("warning: \(line) (--strict makes this an error)")
    }
  }

  /// The revision of `--as-of`, if given.
  var asOf: String?

  /// The store as `--as-of` names it, or nil for the working tree.
  func snapshot(_ store: Store) throws -> StoreSnapshot? {
    try asOf.map { try store.snapshot(asOf: $0) }
  }

  /// A range value: JSON if it parses, else the text as a string.
  static func value(_ text: String) -> JSONValue {
    (try? JSONValue(parsing: text)) ?? .string(text)
  }

  /// The query over `table`, with every option applied.
  /// - Throws: ``UsageError`` for a mistake the library finds (a bad
  ///   `--where` expression, a range value the ordering cannot take).
  func makeQuery(_ store: Store, table: String) throws -> Query {
    var query = store.collection(table).query()
    do {
      switch ordering {
      case .key?: query = try query.orderByKey()
      case .value?: query = try query.orderByValue()
      case .child(let path)?: query = try query.orderBy(child: path)
      case nil: break
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
      if let (option, n) = limit {
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
}
