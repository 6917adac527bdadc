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
  static let flags: Set<String> = ["--order-by-key", "--order-by-value"]

  /// The usage line's query part.
  static let usage = """
    [--order-by-child PATH | --order-by-key | --order-by-value]
    [--start-at V] [--start-after V] [--end-at V] [--end-before V] [--equal-to V]
    [--start-key K] [--end-key K] [--limit-to-first N | --limit-to-last N] [--where EXPR]
    [--as-of REV]
    """

  /// The help text for these options.
  static let details = """
    ORDERING (one; default: the table's first 'order' key in folio.yaml, else the key):
      --order-by-child PATH   By the value at PATH (meta.updated, or meta/updated as Firebase).
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
                              e.g. 'AIRLINE == "AA" && DEPARTURE_DELAY > 60'.

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
